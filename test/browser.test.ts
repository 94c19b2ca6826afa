/**
 * The web UI in Debian's Chromium (playwright-core, never a downloaded browser) against the real
 * `sqlrecall serve --users` on the demo database, with the scripted model server. Skipped with a
 * visible line when /usr/bin/chromium is absent. Playwright gives each launch a fresh temporary
 * profile (its --user-data-dir). Screenshots go to test-artifacts/ (gitignored).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { createDemoDatabase } from '../src/demo/load.js';
import { createPgliteClient } from '../src/memory/store/index.js';
import { type ScriptedOllama, startScriptedOllama } from '../src/models/scripted/server.js';
import { UserDirectory } from '../src/server/users.js';
import { BIN, ROOT } from './support/cli.js';
import { messageOf } from './support/memory-fixtures.js';
import { extractionFor } from './support/memory-pipeline.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(ROOT, 'test-artifacts');
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  process.stderr.write(`SKIP browser test: ${CHROMIUM} is absent (apt-get install chromium)\n`);

/** Revenue per month, for India only when the prompt carries that preference. */
function monthlySql(india: boolean): string {
  return [
    "SELECT date_trunc('month', o.order_date)::date AS month, sum(o.total_amount) AS revenue",
    'FROM orders o JOIN customers c ON c.id = o.customer_id',
    india ? "WHERE c.country = 'India'" : '',
    "AND o.order_date >= DATE '2024-01-01' AND o.order_date < DATE '2024-07-01'",
    'GROUP BY 1 ORDER BY 1',
  ]
    .filter(Boolean)
    .join(' ')
    .replace(/^(.*?FROM orders o JOIN customers c ON c.id = o.customer_id) AND/, '$1 WHERE');
}

/** Builds dist/web when it is missing or older than web/src. */
function ensureWebBuilt(): void {
  const index = join(ROOT, 'dist', 'web', 'index.html');
  const newest = Math.max(
    ...[
      'app.tsx',
      'chat.tsx',
      'result.tsx',
      'memory-bank.tsx',
      'panels.tsx',
      'api.ts',
      'styles.css',
      'main.tsx',
    ].map((f) => statSync(join(ROOT, 'web', 'src', f)).mtimeMs),
  );
  if (existsSync(index) && statSync(index).mtimeMs >= newest) return;
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', 'web'], {
    cwd: ROOT,
    stdio: 'ignore',
  });
}

describe.skipIf(!hasChromium)('web UI in Chromium', () => {
  let home: string;
  let model: ScriptedOllama;
  let serve: ChildProcess;
  let url: string;
  let browser: Browser;
  let serverLog = '';
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    ensureWebBuilt();
    mkdirSync(ARTIFACTS, { recursive: true });
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-browser-'));
    const dbDir = join(home, 'demo-shop');
    await createDemoDatabase(dbDir);
    model = await startScriptedOllama({
      chat: (request) => {
        const prompt = request.messages.map((m) => m.content).join('\n');
        if (request.purpose === 'memory-extract') return extractionFor(messageOf(request.lastUserMessage));
        if (request.purpose === 'memory-reconcile') return JSON.stringify({ action: 'ADD' });
        if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER))
          return `\`\`\`sql\n${monthlySql(/customers from India/i.test(prompt))}\n\`\`\``;
        return 'Revenue per month for the first half of 2024.';
      },
    });
    const client = createPgliteClient(join(home, 'memory'));
    const users = new UserDirectory(client);
    tokens.alice = await users.add('alice');
    tokens.bob = await users.add('bob');
    await client.close();
    serve = spawn(
      process.execPath,
      [
        BIN,
        'serve',
        '--users',
        '--port',
        '0',
        '--db',
        `pglite:${dbDir}`,
        '--ollama-host',
        model.url,
        '--home',
        home,
      ],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    serve.stderr?.on('data', (d) => {
      serverLog += d;
    });
    url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`serve did not start: ${serverLog}`)), 45_000);
      serve.stdout?.on('data', (d) => {
        out += d;
        const m = /Listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      serve.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${serverLog}`)));
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--headless',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    if (serve && serve.exitCode === null) {
      const exited = new Promise((r) => serve.once('exit', r));
      serve.kill('SIGTERM');
      await exited;
    }
    await model?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  async function signIn(page: Page, token: string): Promise<void> {
    await page.goto(url);
    await page.getByLabel('Access token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('region', { name: 'Memory bank' }).waitFor();
  }

  it('teaches, asks, applies a chip, edits, deletes and undoes; a second user sees nothing', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const offsite: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(url) && !r.url().startsWith('data:') && !r.url().startsWith('blob:'))
        offsite.push(r.url());
    });
    // 1. sign in
    await signIn(page, tokens.alice!);
    const bank = page.getByRole('region', { name: 'Memory bank' });
    await bank.getByText('Nothing remembered yet.').waitFor();

    // 2. teach a preference: it appears in the memory bank
    const box = page.getByLabel('Question');
    await box.fill('Always show me customers from India');
    await box.press('Enter');
    await bank.locator('.memory-text', { hasText: 'customers from India' }).waitFor({ timeout: 15_000 });

    // 3. ask: streamed answer, SQL, table, chart, chip
    await box.fill('revenue per month');
    await box.press('Enter');
    const turn = page.locator('article.turn').nth(1);
    await expect
      .poll(() => turn.locator('.answer').textContent(), { timeout: 20_000 })
      .toBe('Revenue per month for the first half of 2024.');
    expect(await turn.locator('details.sql code').textContent()).toContain("c.country = 'India'");
    await turn.getByRole('table', { name: 'Result' }).waitFor();
    await expect.poll(() => turn.getByRole('table', { name: 'Result' }).locator('tbody tr').count()).toBe(6);
    await turn.getByRole('img', { name: /line chart of revenue by month/ }).waitFor();
    const chip = turn.getByRole('button', { name: /Ask again without: Always show me customers from India/ });
    await chip.waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'browser-desktop-answer.png'), fullPage: false });

    // Up recalls the last question.
    await box.press('ArrowUp');
    expect(await box.inputValue()).toBe('revenue per month');
    await box.fill('');

    // 4. click the chip: the answer without the preference
    await chip.click();
    const again = page.locator('article.turn').nth(2);
    await again.locator('.answer').waitFor({ timeout: 20_000 });
    await expect.poll(() => again.getAttribute('data-status'), { timeout: 20_000 }).toBe('done');
    expect(await again.locator('details.sql code').textContent()).not.toContain('India');
    expect(await again.locator('.chips').count()).toBe(0);

    // 5. edit the memory, delete it, undo
    const item = bank.locator('li.memory').first();
    await item.getByRole('button', { name: /^Edit:/ }).click();
    await item.getByLabel('Memory text').fill('Always show me customers from India only');
    await item.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => bank.locator('.memory-text').allTextContents())
      .toEqual(['Always show me customers from India only']);
    await bank.getByRole('button', { name: /^Delete:/ }).click();
    await bank.getByText('Nothing remembered yet.').waitFor();
    await bank.getByRole('button', { name: 'Undo' }).click();
    await expect
      .poll(() => bank.locator('.memory-text').allTextContents())
      .toEqual(['Always show me customers from India only']);
    await bank.getByRole('button', { name: /^History:/ }).click();
    await expect.poll(() => bank.getByRole('list', { name: 'History' }).locator('li').count()).toBe(4); // ADD, UPDATE, DELETE, RESTORE
    await page.screenshot({ path: join(ARTIFACTS, 'browser-desktop-memory.png') });

    // Phone width: the chat and the memory bank are tabs.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'Chat', exact: true }).click();
    await box.waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'browser-phone-chat.png') });
    await page.getByRole('button', { name: 'Memory', exact: true }).click();
    await bank.waitFor();
    await box.waitFor({ state: 'hidden' });
    await page.screenshot({ path: join(ARTIFACTS, 'browser-phone-memory.png') });
    await context.close();
    expect(offsite).toEqual([]);

    // 6. a second user sees an empty memory bank
    const other = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page2 = await other.newPage();
    await signIn(page2, tokens.bob!);
    await page2.getByRole('region', { name: 'Memory bank' }).getByText('Nothing remembered yet.').waitFor();
    await page2.screenshot({ path: join(ARTIFACTS, 'browser-desktop-second-user.png') });
    await other.close();
    expect(serverLog).not.toContain(tokens.alice!);
    expect(serverLog).not.toContain(tokens.bob!);
  }, 90_000);
});
