import { existsSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqlrecallError } from '../core/errors.js';
import { openDatabase, parseDatabaseUrl } from './open.js';

describe('parseDatabaseUrl', () => {
  it('recognises server URLs', () => {
    expect(parseDatabaseUrl('postgres://u:p@h/db')).toEqual({
      engine: 'postgres',
      url: 'postgres://u:p@h/db',
    });
    expect(parseDatabaseUrl(' postgresql://h/db ')).toEqual({ engine: 'postgres', url: 'postgresql://h/db' });
    expect(parseDatabaseUrl('POSTGRES://h/db').engine).toBe('postgres');
  });

  it('recognises embedded URLs', () => {
    expect(parseDatabaseUrl('pglite:memory:')).toEqual({ engine: 'pglite', dataDir: undefined });
    expect(parseDatabaseUrl('pglite:./data/shop')).toEqual({
      engine: 'pglite',
      dataDir: resolve('data/shop'),
    });
    expect(parseDatabaseUrl('pglite:/var/lib/shop')).toEqual({ engine: 'pglite', dataDir: '/var/lib/shop' });
    expect(parseDatabaseUrl('pglite:///var/lib/shop')).toEqual({
      engine: 'pglite',
      dataDir: '/var/lib/shop',
    });
  });

  it.each(['oracle://root:topsecret@db/shop', 'mssql:file.db', 'shop', '', 'postgres:/h/db'])(
    'refuses %j with a masked config error',
    (url) => {
      let caught: unknown;
      try {
        parseDatabaseUrl(url);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(SqlrecallError);
      expect((caught as SqlrecallError).code).toBe('config');
      expect((caught as SqlrecallError).message).toMatch(
        /^DATABASE_URL must start with postgres:\/\/, postgresql:\/\/, pglite:, mysql:\/\/, mariadb:\/\/, sqlite: or duckdb:, or name a data file or folder /,
      );
      expect((caught as SqlrecallError).message).not.toContain('topsecret');
    },
  );
});

describe('embedded database folders', () => {
  it('reads ~ as the home folder, as a shell would', () => {
    expect(parseDatabaseUrl('pglite:~/.sqlrecall/demo-shop')).toEqual({
      engine: 'pglite',
      dataDir: join(homedir(), '.sqlrecall', 'demo-shop'),
    });
    expect(parseDatabaseUrl('pglite:~')).toEqual({ engine: 'pglite', dataDir: homedir() });
    // Only a leading ~ is the home folder.
    expect(parseDatabaseUrl('pglite:./a~b')).toEqual({ engine: 'pglite', dataDir: resolve('a~b') });
  });

  it('refuses a folder whose parent does not exist instead of creating every folder on the way', async () => {
    const parent = join(tmpdir(), `sqlrecall-no-such-folder-${process.pid}`);
    const missing = join(parent, 'shop');
    const error = await openDatabase(`pglite:${missing}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SqlrecallError);
    expect((error as SqlrecallError).code).toBe('config');
    expect((error as SqlrecallError).message).toBe(
      `There is no database at ${missing}, nor the folder ${parent}.`,
    );
    expect(existsSync(parent)).toBe(false);
  });
});
