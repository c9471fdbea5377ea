// out[b][c][r] = x[b][r][c] for [batch, rows, cols], bit for bit, through 32 x 33 tiles of
// workgroup memory (the padding column keeps the transposed reads off one bank). A workgroup of
// 32 x 8 moves one tile; x, y and z loop where cols / 32, rows / 32 or batch pass the grid limit.

var<workgroup> tile: array<u32, 1056>;

@compute @workgroup_size(32, 8)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let matrix = P.rows * P.cols;
  for (var b = wid.z; b < P.batch; b += nwg.z) {
    for (var ty = wid.y; ty * 32u < P.rows; ty += nwg.y) {
      for (var tx = wid.x; tx * 32u < P.cols; tx += nwg.x) {
        let r0 = ty * 32u;
        let c0 = tx * 32u;
        for (var k = 0u; k < 32u; k += 8u) {
          let r = r0 + lid.y + k;
          let c = c0 + lid.x;
          if (r < P.rows && c < P.cols) {
            tile[(lid.y + k) * 33u + lid.x] = bits_x(b * matrix + r * P.cols + c);
          }
        }
        workgroupBarrier();
        for (var k = 0u; k < 32u; k += 8u) {
          let c = c0 + lid.y + k;
          let r = r0 + lid.x;
          if (r < P.rows && c < P.cols) {
            stbits_out(b * matrix + c * P.rows + r, tile[lid.x * 33u + lid.y + k]);
          }
        }
        workgroupBarrier();
      }
    }
  }
}
