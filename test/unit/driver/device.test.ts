import { describe, expect, it } from 'vitest';
import { formatUuid } from '../../../src/driver/device.js';

describe('formatUuid', () => {
  it('prints 16 bytes as nvidia-smi does', () => {
    const bytes = Uint8Array.from([0x5f, 0x3a, 0x00, 0x91, 0xab, 0xcd, 0x12, 0x34, 0x0f, 0xf0, 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02]);
    expect(formatUuid(bytes)).toBe('GPU-5f3a0091-abcd-1234-0ff0-deadbeef0102');
  });
});
