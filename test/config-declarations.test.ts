/**
 * Every setting is declared once (src/config/settings.ts) and everything else follows from that
 * declaration: the global options and their help, the mapping of parsed options back to settings,
 * the README's table. The environment is read only inside src/config/, and the version only from
 * package.json.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { flagValues } from '../src/cli/config-from.js';
import { loadConfig } from '../src/config/config.js';
import { flagAttribute, flagName, SETTINGS, type SettingDeclaration } from '../src/config/settings.js';
import {
  SETTINGS_END,
  SETTINGS_START,
  settingsTable,
  withSettingsTable,
} from '../src/config/settings-doc.js';
import { packageVersion } from '../src/config/version.js';
import { ROOT } from './support/cli.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { tempDir } from './support/temp-dir.js';

const declarations = Object.entries(SETTINGS) as [keyof typeof SETTINGS, SettingDeclaration][];
const flagged = declarations.filter(([, d]) => d.flag !== undefined);

/** Every .ts/.tsx file under `dir`, recursively. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

describe('settings declared once', () => {
  it('no module outside src/config/ reads process.env', () => {
    const offenders = sourceFiles(join(ROOT, 'src'))
      .filter((file) => !relative(join(ROOT, 'src'), file).startsWith('config/'))
      .filter((file) => /\bprocess\s*(\.\s*env\b|\[\s*['"]env['"]\s*\])/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(offenders).toEqual([]);
  });

  it('names each setting once: distinct keys, variables and flags', () => {
    const envs = declarations.map(([, d]) => d.env);
    expect(new Set(envs).size).toBe(envs.length);
    const flags = flagged.map(([, d]) => flagName(d.flag!));
    expect(new Set(flags).size).toBe(flags.length);
  });

  it("computes each flag's option attribute as commander does", () => {
    for (const [, d] of flagged)
      expect(flagAttribute(d.flag!), d.flag).toBe(new Option(d.flag!).attributeName());
  });

  it('registers every flag in the program, visible ones with their variable in the help', async () => {
    const run = await runCliInProcess(['--help']);
    expect(run.code).toBe(0);
    const help = run.stdout.replace(/\s+/g, ' ');
    for (const [, d] of flagged) {
      if (d.hidden) expect(help).not.toContain(`${d.flag} `);
      else expect(help).toContain(`[${d.env}]`);
    }
    // Variables without a visible option are listed in the help's Configuration section.
    for (const [, d] of declarations.filter(([, d]) => d.flag === undefined || d.hidden))
      expect(help).toContain(d.env);
  });

  it('a value given as any flag reaches its setting; an invalid one is named by its flag', async () => {
    for (const [key, d] of flagged.filter(([, d]) => d.flag!.includes('<'))) {
      const parsed = flagValues({ [flagAttribute(d.flag!)]: 'sentinel' } as never);
      expect(parsed, d.flag).toEqual({ [key]: 'sentinel' });
    }
    expect(flagValues({ memory: false })).toEqual({ memoryEnabled: 'off' });
    expect(flagValues({ memory: true })).toEqual({});
    const home = tempDir('sqlrecall-flags-');
    const run = await runCliInProcess(['--max-rows', 'many', '--home', home, 'sql', 'select 1']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--max-rows');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it("every declaration's default passes its own validator", () => {
    const config = loadConfig({ env: {}, cwd: tempDir('sqlrecall-defaults-') });
    for (const [key, d] of declarations) {
      if (d.default !== undefined) expect(config[key], key).not.toBeUndefined();
    }
    expect(config.memoryEnabled).toBe(true);
    expect(config.schemas).toEqual([]);
  });
});

describe('README settings table', () => {
  it('is the rendering of the declarations (run `npm run docs:settings` when this fails)', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(SETTINGS_START);
    expect(readme).toContain(SETTINGS_END);
    expect(withSettingsTable(readme)).toBe(readme);
  });

  it('has one row per setting with its variable, flag and default', () => {
    const table = settingsTable();
    for (const [, d] of declarations) {
      const row = table.split('\n').find((line) => line.startsWith(`| \`${d.env}\` |`));
      expect(row, d.env).toBeDefined();
      if (d.flag) expect(row).toContain(`\`${d.flag}\``);
      if (typeof d.default === 'number') expect(row).toContain(`\`${d.default}\``);
    }
  });

  it('a stale table is replaced between the markers, and missing markers are an error', () => {
    const stale = `intro\n${SETTINGS_START}\n| old |\n${SETTINGS_END}\noutro\n`;
    const fresh = withSettingsTable(stale);
    expect(fresh).not.toContain('| old |');
    expect(fresh.startsWith(`intro\n${SETTINGS_START}\n| variable |`)).toBe(true);
    expect(fresh.endsWith(`${SETTINGS_END}\noutro\n`)).toBe(true);
    expect(() => withSettingsTable('no markers')).toThrow(/settings:start/);
  });
});

describe('version', () => {
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string })
    .version;

  it('is read from package.json, and --version prints it', async () => {
    expect(packageVersion()).toBe(version);
    const run = await runCliInProcess(['--version']);
    expect(run.stdout.trim()).toBe(version);
  });

  it('no source file writes a version number of its own', () => {
    const offenders = sourceFiles(join(ROOT, 'src'))
      .filter((file) => !file.endsWith('.test.ts'))
      .filter((file) =>
        /version:\s*['"]\d+\.\d+\.\d+['"]|npm_package_version/.test(readFileSync(file, 'utf8')),
      )
      .map((file) => relative(ROOT, file));
    expect(offenders).toEqual([]);
  });

  it('engines.node asks for what the dependencies need (undici, vite)', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe('^20.19.0 || >=22.12.0');
    const engines = (name: string) =>
      (
        JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
          engines: { node: string };
        }
      ).engines.node;
    expect(engines('undici')).toMatch(/>=20\.(1[0-9])/);
    expect(engines('vite')).toContain('20.19');
  });
});
