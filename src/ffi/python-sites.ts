import { readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Folders where pip installs packages, found by expanding a short list of
 * well-known patterns (system Pythons, venvs, conda, user installs). Only the
 * folders named by the patterns are listed, so this costs a handful of
 * `readdir` calls and never walks the disk. NVIDIA's wheels (`nvidia-cuda-nvrtc`,
 * `nvidia-cuda-runtime`, the CUDA 13 `cu13` wheels) install under these.
 */
export function pythonSitePackages(): string[] {
  const env = process.env;
  const patterns: string[] = [];
  if (process.platform === 'win32') {
    for (const root of [env.VIRTUAL_ENV, env.CONDA_PREFIX]) {
      if (root) patterns.push(join(root, 'Lib', 'site-packages'));
    }
    if (env.LOCALAPPDATA) patterns.push(join(env.LOCALAPPDATA, 'Programs', 'Python', 'Python3*', 'Lib', 'site-packages'));
    if (env.APPDATA) patterns.push(join(env.APPDATA, 'Python', 'Python3*', 'site-packages'));
  } else {
    for (const root of [env.VIRTUAL_ENV, env.CONDA_PREFIX]) {
      if (root) patterns.push(join(root, 'lib', 'python3*', 'site-packages'));
    }
    patterns.push(
      join(homedir(), '.local', 'lib', 'python3*', 'site-packages'),
      '/usr/local/lib/python3*/dist-packages',
      '/usr/local/lib/python3*/site-packages',
      '/usr/lib/python3/dist-packages',
      '/usr/lib/python3*/site-packages',
      '/usr/lib/python3*/dist-packages',
      '/opt/conda/lib/python3*/site-packages',
      '/opt/*/lib/python3*/site-packages',
      '/opt/*/.venv/lib/python3*/site-packages',
    );
  }
  return [...new Set(patterns.flatMap(expandPattern))];
}

/**
 * Expands `*` wildcards segment by segment, listing only the parent folder of
 * each wildcard segment. Newest-looking names (python3.12 before python3.9)
 * come first, so a newer interpreter's wheels win.
 */
function expandPattern(pattern: string): string[] {
  const sep = process.platform === 'win32' ? /[\\/]/ : /\//;
  const segments = pattern.split(sep);
  const first = segments[0]!;
  // The root: '/' on POSIX, 'C:\\' on Windows (a bare 'C:' would mean the drive's current folder).
  let bases = [first === '' ? '/' : first.endsWith(':') ? `${first}\\` : first];
  for (const segment of segments.slice(1)) {
    if (segment === '') continue;
    if (!segment.includes('*')) {
      bases = bases.map((b) => join(b, segment));
      continue;
    }
    const re = new RegExp(`^${segment.split('*').map(escapeRegExp).join('.*')}$`);
    bases = bases.flatMap((base) =>
      listDirectories(base)
        .filter((name) => re.test(name))
        .sort(newestFirst)
        .map((name) => join(base, name)),
    );
  }
  return bases.filter(isDirectory);
}

function listDirectories(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory() || d.isSymbolicLink())
      .map((d) => d.name);
  } catch {
    return [];
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function newestFirst(a: string, b: string): number {
  return b.localeCompare(a, 'en', { numeric: true });
}

function escapeRegExp(s: string): string {
  return s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}
