/**
 * The installation's initialized cluster (src/databases/pglite/template.ts, made by
 * scripts/make-pglite-template.mjs as part of the build): a new embedded data directory is a copy
 * of it (no initdb), the copy is a working, empty, writable cluster, the switch turns it off, an
 * existing cluster is never touched, and the archive reader refuses entries that could write
 * outside the directory.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite } from '../src/databases/pglite/sharing.js';
import {
  readUstar,
  seedFromTemplate,
  TEMPLATE_SWITCH_ENV,
  templateArchive,
} from '../src/databases/pglite/template.js';

const work = mkdtempSync(join(tmpdir(), 'sqlrecall-shipped-template-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the shipped PGlite template', () => {
  it('exists in a built checkout for the installed PGlite version (the build made it)', () => {
    const archive = templateArchive();
    expect(
      archive,
      'run `npm run build`: dist/pglite-template is missing or for another PGlite',
    ).toBeDefined();
    expect(existsSync(archive as string)).toBe(true);
  });

  it('a new data directory is a copy of it: an empty, writable cluster that opens without initdb', async () => {
    const dir = join(work, 'store');
    mkdirSync(dir);
    writeFileSync(join(dir, 'sqlrecall-memory.lock'), 'held'); // what the lock holder leaves beside
    expect(seedFromTemplate(dir)).toBe(true);
    expect(readFileSync(join(dir, 'PG_VERSION'), 'utf8').trim()).toMatch(/^\d+$/);
    expect(readdirSync(dir)).not.toContain('PG_VERSION.partial');
    expect(readFileSync(join(dir, 'sqlrecall-memory.lock'), 'utf8')).toBe('held');
    const db = await openPglite(dir, true);
    try {
      const tables = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = 'public'",
      );
      expect(tables.rows[0]?.n).toBe(0);
      await db.exec("CREATE EXTENSION vector; CREATE TABLE v (e vector(2)); INSERT INTO v VALUES ('[1,0]');");
      expect((await db.query<{ d: number }>("SELECT e <=> '[0,1]' AS d FROM v")).rows[0]?.d).toBeCloseTo(1);
    } finally {
      await db.close();
    }
    // Opened again, the cluster is kept as it is: never seeded twice.
    expect(seedFromTemplate(dir)).toBe(false);
    const again = await openPglite(dir, true);
    try {
      expect((await again.query<{ n: number }>('SELECT count(*)::int AS n FROM v')).rows[0]?.n).toBe(1);
    } finally {
      await again.close();
    }
  }, 120_000);

  it(`${TEMPLATE_SWITCH_ENV}=off turns it off (then PGlite runs initdb as before)`, () => {
    expect(templateArchive({ [TEMPLATE_SWITCH_ENV]: 'off' })).toBeUndefined();
    const dir = join(work, 'off');
    expect(seedFromTemplate(dir, { [TEMPLATE_SWITCH_ENV]: 'off' })).toBe(false);
    expect(existsSync(join(dir, 'PG_VERSION'))).toBe(false);
  });
});

describe('readUstar (hostile archives)', () => {
  const tar = (name: string, cwd: string, members: string[], extra: string[] = []): Buffer => {
    const file = join(work, name);
    const made = spawnSync('tar', ['--format=ustar', ...extra, '-cf', file, '-C', cwd, ...members]);
    if (made.status !== 0) throw new Error(String(made.stderr));
    return readFileSync(file);
  };

  it('reads files and directories, with leading slashes taken as the root', () => {
    const src = join(work, 'plain');
    mkdirSync(join(src, 'base'), { recursive: true });
    writeFileSync(join(src, 'base', 'file'), 'data');
    const entries = readUstar(tar('plain.tar', src, ['base']));
    expect(entries.map((e) => [e.path, e.type])).toEqual([
      ['base', 'directory'],
      ['base/file', 'file'],
    ]);
    expect(Buffer.from(entries[1]?.data ?? []).toString()).toBe('data');
  });

  it('refuses a path that climbs out, a link, and a damaged header', () => {
    const src = join(work, 'hostile', 'inner');
    mkdirSync(src, { recursive: true });
    writeFileSync(join(work, 'hostile', 'outside'), 'x');
    expect(() => readUstar(tar('climb.tar', src, ['../outside'], ['-P']))).toThrow(/unsafe path/);
    symlinkSync('/etc/passwd', join(src, 'link'));
    expect(() => readUstar(tar('link.tar', src, ['link']))).toThrow(/unsupported tar entry/);
    const damaged = Buffer.from(tar('plain2.tar', join(work, 'plain'), ['base']));
    damaged[10] = (damaged[10] ?? 0) ^ 0xff;
    expect(() => readUstar(damaged)).toThrow(/checksum/);
  });
});
