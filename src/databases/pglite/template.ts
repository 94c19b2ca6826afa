/**
 * A new embedded data directory starts from a copy of an initialized cluster instead of running
 * initdb. PGlite's initdb starts a second WebAssembly PostgreSQL plus the initdb module: on the
 * 2-core test machine a new data directory took 8–22 s and peaked at 735–770 MB of resident memory,
 * while extracting the same cluster and opening it took ≈ 1–5 s and ≈ 170 MB (docs/perf/first-run.md).
 *
 * The cluster is made once per installation by `scripts/make-pglite-template.mjs` (part of `npm run
 * build`, so of `npm install` from a clone and of `npm pack`): PGlite's initdb into a directory,
 * dumped as gzipped ustar archives in `dist/pglite-template/` ({@link TemplateName}) with
 * `manifest.json` naming the PGlite version that made them. It is used only when that version is the one installed;
 * otherwise, or without the archive (running from a checkout that was never built), or with
 * `SQLRECALL_PGLITE_TEMPLATE=off`, PGlite runs initdb as before.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { processEnv } from '../../config/env.js';

/** Folder of the template inside the package, beside the compiled code. */
export const TEMPLATE_DIR = join('dist', 'pglite-template');
/** The manifest inside {@link TEMPLATE_DIR}; each template is `<name>.tar.gz` beside it. */
export const TEMPLATE_MANIFEST = 'manifest.json';

/**
 * The templates the build makes: `pgdata`, the pristine cluster (a new `pglite:` database, the demo
 * shop); `memory-store`, the same with pgvector and the migrations of the memory store, the schema
 * index and the users applied (their first open then only checks them).
 */
export type TemplateName = 'pgdata' | 'memory-store';
/** Environment variable that turns the template off (`off`), e.g. to measure the first run without it. */
export const TEMPLATE_SWITCH_ENV = 'SQLRECALL_PGLITE_TEMPLATE';

/** The version of the installed PGlite package (its package.json, next to its entry point). */
function installedPgliteVersion(): string | undefined {
  try {
    const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
    let dir = dirname(entry);
    for (let depth = 0; depth < 3; depth += 1, dir = dirname(dir)) {
      const file = join(dir, 'package.json');
      if (!existsSync(file)) continue;
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@electric-sql/pglite') return pkg.version;
    }
  } catch {
    // not resolvable: no template
  }
  return undefined;
}

/**
 * The template archive for the installed PGlite, or undefined when there is none (see the module
 * comment). Looked for in `dist/pglite-template` of the package this module belongs to: compiled
 * (`dist/databases/pglite`), bundled (`dist/bundle`) or run from `src/` in a built checkout.
 */
export function templateArchive(
  env: NodeJS.ProcessEnv = processEnv(),
  name: TemplateName = 'pgdata',
): string | undefined {
  if (env[TEMPLATE_SWITCH_ENV]?.trim().toLowerCase() === 'off') return undefined;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 5; depth += 1, dir = dirname(dir)) {
    const manifest = join(dir, TEMPLATE_DIR, TEMPLATE_MANIFEST);
    if (!existsSync(manifest)) continue;
    try {
      const { pglite } = JSON.parse(readFileSync(manifest, 'utf8')) as { pglite?: string };
      const archive = join(dir, TEMPLATE_DIR, `${name}.tar.gz`);
      return pglite !== undefined && pglite === installedPgliteVersion() && existsSync(archive)
        ? archive
        : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** One entry of a ustar archive. */
interface Entry {
  path: string;
  type: 'file' | 'directory';
  mode: number;
  data: Uint8Array;
}

/** A NUL-ended (or full-width) text field of a ustar header. */
function field(header: Buffer, offset: number, length: number): string {
  const raw = header.subarray(offset, offset + length);
  const end = raw.indexOf(0);
  return raw.toString('utf8', 0, end === -1 ? length : end);
}

/**
 * The entries of an uncompressed ustar archive (POSIX.1-1988: 512-byte headers, `prefix/name`,
 * octal sizes), files and directories only; paths relative to the archive's root.
 * @throws Error for any other entry type, a bad checksum, or a path that leaves the archive's root
 */
export function readUstar(archive: Buffer): Entry[] {
  const entries: Entry[] = [];
  for (let at = 0; at + 512 <= archive.length; ) {
    const header = archive.subarray(at, at + 512);
    if (header.every((byte) => byte === 0)) break; // the end-of-archive blocks
    let sum = 0;
    for (let i = 0; i < 512; i += 1) sum += i >= 148 && i < 156 ? 32 : (header[i] as number);
    if (sum !== Number.parseInt(field(header, 148, 8).trim(), 8)) throw new Error('bad tar header checksum');
    const prefix = field(header, 345, 155);
    const path = (prefix ? `${prefix}/` : '') + field(header, 0, 100);
    const size = Number.parseInt(field(header, 124, 12).trim() || '0', 8);
    const flag = String.fromCharCode(header[156] as number);
    const type = flag === '5' ? 'directory' : flag === '0' || flag === '\0' ? 'file' : undefined;
    if (!type) throw new Error(`unsupported tar entry type "${flag}" for ${path}`);
    const parts = path.split('/').filter((part) => part !== '' && part !== '.');
    if (parts.length === 0 && type === 'directory') {
      at += 512;
      continue;
    }
    // Leading slashes are read as the archive's root, as tar does (PGlite writes `/PG_VERSION`).
    if (parts.length === 0 || parts.includes('..')) throw new Error(`unsafe path in tar archive: ${path}`);
    const mode = Number.parseInt(field(header, 100, 8).trim() || '0', 8) & 0o777;
    entries.push({ path: parts.join('/'), type, mode, data: archive.subarray(at + 512, at + 512 + size) });
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

/**
 * Fills `dir` (created if missing; may hold sqlrecall's lock file and run directory, nothing of a
 * cluster) with the template cluster, when there is a template and `dir` holds no cluster yet.
 * Writes `PG_VERSION` last, through a rename: a copy interrupted half-way is not taken for a cluster
 * (PGlite looks for `PG_VERSION`) and is simply made again by the next opener.
 * @returns true when the cluster was copied; false when there is no template or `dir` holds a
 *   cluster already (then PGlite opens it, or runs initdb, as before)
 * @throws the file system's error when `dir` cannot be written
 */
export function seedFromTemplate(
  dir: string,
  env: NodeJS.ProcessEnv = processEnv(),
  name: TemplateName = 'pgdata',
): boolean {
  if (existsSync(join(dir, 'PG_VERSION'))) return false;
  const archive = templateArchive(env, name);
  if (!archive) return false;
  let entries: Entry[];
  try {
    entries = readUstar(gunzipSync(readFileSync(archive)));
  } catch {
    return false; // a damaged template: initdb as before
  }
  const root = resolve(dir);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  let version: Entry | undefined;
  for (const entry of entries) {
    const path = entry.path;
    const target = join(root, path);
    if (!target.startsWith(root + sep)) continue; // never outside `dir` (readUstar refused such paths)
    if (path === 'PG_VERSION') {
      version = entry;
      continue;
    }
    if (entry.type === 'directory') mkdirSync(target, { recursive: true, mode: 0o700 });
    else {
      mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
      writeFileSync(target, entry.data, { mode: entry.mode || 0o600 });
    }
  }
  if (!version) return false;
  const partial = join(root, 'PG_VERSION.partial');
  writeFileSync(partial, version.data, { mode: 0o600 });
  renameSync(partial, join(root, 'PG_VERSION'));
  return true;
}

/**
 * The template as a plain tar Blob, for an in-memory instance (`loadDataDir`), or undefined when
 * there is no template.
 */
export function templateBlob(env: NodeJS.ProcessEnv = processEnv()): Blob | undefined {
  const archive = templateArchive(env);
  if (!archive) return undefined;
  try {
    return new Blob([gunzipSync(readFileSync(archive))], { type: 'application/x-tar' });
  } catch {
    return undefined;
  }
}
