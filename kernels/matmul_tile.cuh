// Tile scheduling shared by the matmul kernels: tile ids walk the output tiles in groups of
// GC_GROUP_M tile rows (column-major inside a group), so blocks that run at the same time
// share A rows and B columns in L2. One-tile-per-block kernels use blockIdx.x as the id and
// blockIdx.z as the batch entry; the persistent Hopper kernel walks ids itself.
#pragma once

#ifndef GC_GROUP_M
#define GC_GROUP_M 8
#endif

struct TileCoord {
  int m0;  // first output row of the tile
  int n0;  // first output column of the tile
};

// Tile `pid` of an m × n output cut into bm × bn tiles.
__device__ __forceinline__ TileCoord gc_tile_coord_at(int pid, int m, int n, int bm, int bn) {
  const int tiles_m = (m + bm - 1) / bm;
  const int tiles_n = (n + bn - 1) / bn;
  const int per_group = GC_GROUP_M * tiles_n;
  const int group = pid / per_group;
  const int first_m = group * GC_GROUP_M;
  const int group_m = min(tiles_m - first_m, GC_GROUP_M);
  const int in_group = pid - group * per_group;
  TileCoord t;
  t.m0 = (first_m + in_group % group_m) * bm;
  t.n0 = (in_group / group_m) * bn;
  return t;
}

__device__ __forceinline__ TileCoord gc_tile_coord(int m, int n, int bm, int bn) { return gc_tile_coord_at(blockIdx.x, m, n, bm, bn); }
