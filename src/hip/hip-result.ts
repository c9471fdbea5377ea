import { HipResult, hipResultHeaderDescriptions } from './generated/hip-result.js';
import { hipResultDescriptionOverrides, hipResultDescriptionsNotInHeader } from './hip-result-descriptions.js';

export { HipResult };

/** The C name of a hipError_t code, deprecated aliases included. */
export type HipResultName = keyof typeof HipResult;

// A code's first name in the header is its name; later ones are deprecated aliases.
const NAMES = new Map<number, HipResultName>();
for (const [name, code] of Object.entries(HipResult) as [HipResultName, number][]) {
  if (!NAMES.has(code)) NAMES.set(code, name);
}

/** The C name of a hipError_t code, or undefined for a code this table does not know. */
export function hipResultName(code: number): HipResultName | undefined {
  return NAMES.get(code);
}

/**
 * A clause saying what a hipError_t code means (HIP itself only gives the
 * name): hip_runtime_api.h's comment on the code where it has a fitting one,
 * else this library's wording.
 */
export function hipResultDescription(code: number): string {
  const name = NAMES.get(code);
  if (!name) return `unknown hipError_t ${code}`;
  return (
    hipResultDescriptionOverrides[name] ?? hipResultHeaderDescriptions[name] ?? hipResultDescriptionsNotInHeader[name] ?? name
  );
}
