import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateText } from '../src/core/chat.js';
import { createOllamaChatModel } from '../src/models/ollama/chat-model.js';
import { createOllamaEmbeddingModel } from '../src/models/ollama/embedding-model.js';
import { tempDir } from './support/temp-dir.js';

const MAIN = join(import.meta.dirname, 'support', 'scripted', 'main.ts');

function startCli(args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    cwd: join(import.meta.dirname, '..'),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

async function firstLine(child: ChildProcess): Promise<string> {
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  lines.close();
  return line;
}

describe('scripted server CLI (test/support/scripted/main.ts)', () => {
  let dir: string;
  let child: ChildProcess;
  let url: string;
  let stderr = '';

  beforeAll(async () => {
    dir = tempDir('scripted-cli-');
    const script = join(dir, 'script.json');
    writeFileSync(
      script,
      JSON.stringify({
        embeddingDimensions: 768,
        rules: [
          { purpose: 'sql', match: 'customers', reply: 'SELECT count(*) FROM customers' },
          { match: 'retry', replies: ['SELECT broken', 'SELECT 1'] },
          { match: 'long', reply: { text: 'cut off', doneReason: 'length' } },
        ],
        default: 'I do not know.',
      }),
    );
    child = startCli(['--script', script, '--exit-with-stdin', '--verbose']);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    url = await firstLine(child);
  }, 60_000);

  afterAll(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints its URL as one line and answers per rule', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const model = createOllamaChatModel({ host: url, model: 'qwen2.5-coder:7b' });
    const ask = (system: string, question: string) =>
      generateText(model, {
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: question },
        ],
      });
    expect((await ask('purpose: sql', 'How many customers?')).text).toBe('SELECT count(*) FROM customers');
    expect((await ask('purpose: answer', 'How many customers?')).text).toBe('I do not know.');
    expect((await ask('', 'please retry')).text).toBe('SELECT broken');
    expect((await ask('', 'please retry')).text).toBe('SELECT 1');
    const long = await ask('', 'a long one');
    expect(long.finishReason).toBe('length');
    expect(long.text).toBe('cut off');
    const embedder = createOllamaEmbeddingModel({ host: url, model: 'all-minilm' });
    expect(await embedder.dimensions()).toBe(768);
    expect(stderr).toContain('purpose=sql');
  });

  it('exits when stdin closes (--exit-with-stdin)', async () => {
    const exited = once(child, 'exit');
    child.stdin!.end();
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
  });

  it('exits with code 2 and a clear message for a bad script', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ rules: [{ match: '(', reply: 'x' }] }));
    const proc = startCli(['--script', bad]);
    let err = '';
    proc.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const [code] = (await once(proc, 'exit')) as [number | null];
    expect(code).toBe(2);
    expect(err).toContain('rules.0.match');
    const missing = startCli([]);
    const [missingCode] = (await once(missing, 'exit')) as [number | null];
    expect(missingCode).toBe(2);
  }, 60_000);
});
