/**
 * The help agrees with the README and with the code's own declarations: exit codes from the one
 * error table, the global options on every subcommand's help, every `memory` subcommand, no claim
 * that the demo needs no server, `schema context` honest about degradation, and Ctrl-C in any
 * command exits 130 saying "cancelled".
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEMORY_SUBCOMMANDS } from '../src/cli/memory-subcommands.js';
import { ERROR_TABLE, EXIT_CODE_MEANINGS, EXIT_INTERRUPTED } from '../src/core/errors.js';
import { ROOT, startSqlrecall } from './support/cli.js';
import { pgliteShop } from './support/fixtures.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

const help = async (args: string[]) => {
  const run = await runCliInProcess([...args, '--help']);
  expect(run.code).toBe(0);
  return run.stdout;
};

describe('help', () => {
  it('lists every exit code of the error table, 6 and 130 included, as the README does', async () => {
    const codes = EXIT_CODE_MEANINGS.map(([code]) => code);
    for (const { exitCode } of Object.values(ERROR_TABLE)) expect(codes).toContain(exitCode);
    expect(codes).toContain(6);
    expect(codes).toContain(EXIT_INTERRUPTED);
    const main = (await help([])).replace(/\s+/g, ' ');
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(
      readme.indexOf('### Exit codes'),
      readme.indexOf('###', readme.indexOf('### Exit codes') + 4),
    );
    for (const [code, meaning] of EXIT_CODE_MEANINGS) {
      expect(main).toContain(`${code} ${meaning}`);
      expect(section.replace(/\s+/g, ' ')).toContain(`\`${code}\` ${meaning}`);
    }
  });

  it("every subcommand's help shows the global options", async () => {
    const commands = [
      ['ask'],
      ['sql'],
      ['chat'],
      ['memory'],
      ['schema'],
      ['schema', 'context'],
      ['doctor'],
      ['demo'],
      ['serve'],
      ['users'],
      ['mcp'],
      ['hold'],
      ['eval'],
    ];
    for (const command of commands) {
      const text = await help(command);
      for (const option of ['--json', '--db <url>', '--user <id>', '--home <dir>'])
        expect(text, `${command.join(' ')} --help`).toContain(option);
    }
  });

  it('the memory help names every subcommand, pin and unpin included', async () => {
    const text = (await help(['memory'])).replace(/\s+/g, ' ');
    for (const sub of MEMORY_SUBCOMMANDS) expect(text).toMatch(new RegExp(`\\b${sub}\\b`));
    expect(text).toContain('pin, unpin');
    expect(text).toContain(MEMORY_SUBCOMMANDS.join('|')); // the description's list too
  });

  it('the main help does not say the demo needs no server: it needs a model server', async () => {
    const text = await help([]);
    const demo = text.split('\n').findIndex((l) => l.includes('$ sqlrecall demo '));
    const lines = text
      .split('\n')
      .slice(demo, demo + 2)
      .join(' ');
    expect(lines).not.toMatch(/no server needed/);
    expect(lines).toMatch(/model server/);
  });
});

describe('schema context on a small schema', () => {
  let model: ScriptedOllama;
  let shop: string;
  beforeAll(async () => {
    model = await startScriptedOllama();
    shop = (await pgliteShop()).url;
  }, 60_000);
  afterAll(async () => {
    await model?.close();
    if (shop) rmSync(shop.slice('pglite:'.length), { recursive: true, force: true });
  });

  it('well under budget it reports no degradation', async () => {
    const run = await runCliInProcess(['schema', 'context', 'orders per country', '--db', shop, '--json'], {
      env: { OLLAMA_HOST: model.url, SQLRECALL_MEMORY: 'off' },
    });
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.estimatedTokens).toBeLessThan(doc.budget.schemaTokens / 2);
    expect(doc.degradations).toEqual([]);
    const human = await runCliInProcess(['schema', 'context', 'orders per country', '--db', shop], {
      env: { OLLAMA_HOST: model.url, SQLRECALL_MEMORY: 'off' },
    });
    expect(human.stdout).not.toContain('degraded to fit');
  });
});

describe('Ctrl-C in a command without its own handling', () => {
  it('doctor waiting on a model server that never answers: exit 130, "cancelled"', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const home = mkdtempSync(join(tmpdir(), 'sqlrecall-help-'));
    const run = startSqlrecall(['doctor', '--ollama-host', `http://127.0.0.1:${port}`], {
      SQLRECALL_HOME: home,
    });
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('doctor never connected')), 30_000);
        silent.once('connection', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      run.child.kill('SIGINT');
      expect(await run.exited).toBe(130);
      expect(run.out()).toContain('cancelled');
    } finally {
      run.child.kill('SIGKILL');
      for (const s of sockets) s.destroy();
      silent.close();
      rmSync(home, { recursive: true, force: true });
    }
  }, 60_000);
});
