import { describe, expect, it } from 'vitest';
import { hipResultHeaderDescriptions } from '../../../src/hip/generated/hip-result.js';
import { hipResultDescriptionOverrides, hipResultDescriptionsNotInHeader } from '../../../src/hip/hip-result-descriptions.js';
import { HipResult, hipResultDescription, hipResultName } from '../../../src/hip/hip-result.js';

const firstNames = [...new Set(Object.values(HipResult))].map((code) => hipResultName(code)!);

describe('hipError_t descriptions', () => {
  it('describe every code from exactly one place: the header, an override of it, or the supplement', () => {
    for (const name of firstNames) {
      const inHeader = name in hipResultHeaderDescriptions;
      expect(name in hipResultDescriptionsNotInHeader, `${name}: supplement entry iff the header has none`).toBe(!inHeader);
      if (name in hipResultDescriptionOverrides) expect(inHeader, `${name}: overrides only replace a header comment`).toBe(true);
    }
  });

  it('hold no entries for deprecated aliases or unknown names', () => {
    const known = new Set<string>(firstNames);
    for (const table of [hipResultHeaderDescriptions, hipResultDescriptionsNotInHeader, hipResultDescriptionOverrides]) {
      for (const name of Object.keys(table)) expect(known.has(name), name).toBe(true);
    }
  });

  it('are clauses: a lower-case first word (unless a name or acronym), no closing period', () => {
    for (const name of firstNames) {
      const text = hipResultDescription(HipResult[name]);
      expect(text, name).not.toBe(name);
      expect(text, name).not.toMatch(/^[A-Z][a-z]*\b|[^.]\.$/);
    }
  });

  it("take the header's wording where it fits and this library's where it does not", () => {
    expect(hipResultDescription(HipResult.hipErrorLaunchFailure)).toBe('an exception occurred on the device while executing a kernel');
    expect(hipResultDescription(HipResult.hipErrorInvalidKernelFile)).toBe('the kernel code object is malformed');
    expect(hipResultDescription(HipResult.hipErrorMemoryAllocation)).toBe('the device could not allocate enough memory for the operation');
  });
});
