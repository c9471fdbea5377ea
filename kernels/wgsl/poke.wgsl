// Writes the bytes of one 32-bit word selected by P.mask (the ends of a host write that do not
// fill whole words: WebGPU's buffer writes and copies move only whole words).

@compute @workgroup_size(1)
fn main() {
  stbits_out(0u, (bits_out(0u) & ~P.mask) | (P.value & P.mask));
}
