/**
 * Script files for the scripted server when it runs as its own process (`main.ts`): a JSON document
 * that maps requests to replies, so an end-to-end test can run `sqlrecall` against it.
 *
 * Format (every field optional):
 * ```json
 * {
 *   "models": ["qwen2.5-coder:7b", "all-minilm"],
 *   "embeddingDimensions": 384,
 *   "rules": [
 *     { "purpose": "sql", "match": "how many customers", "reply": "SELECT count(*) FROM customers" },
 *     { "match": "broken", "replies": ["SELECT nope FROM x", "SELECT 1"] },
 *     { "prompt": "Return JSON", "reply": { "text": "{\"facts\": []}" } },
 *     { "match": "slow", "reply": { "text": "ok", "delayMs": 2000, "doneReason": "length" } }
 *   ],
 *   "default": "I cannot answer that."
 * }
 * ```
 * Rules are tried in order; the first whose conditions all hold answers. Conditions are JavaScript
 * regular expressions, matched case-insensitively, anywhere in the text unless anchored:
 * - `match`: the last user message OR the recognised purpose (either may match);
 * - `purpose`: the recognised purpose only (`purpose: <label>` line of a system message);
 * - `prompt`: the whole prompt (all messages' content, joined by blank lines).
 * A rule without conditions matches everything. `reply` is a string or an object
 * `{ text, doneReason, delayMs, chunkDelayMs, status, error }` (see `ScriptedReplyObject`);
 * `replies` is a list used one per matching request, the last one repeating. With no matching rule
 * the `default` reply is used; without a `default`, the server answers HTTP 500
 * "scripted server: no reply programmed".
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { ScriptedChatHandler, ScriptedChatRequest, ScriptedOptions, ScriptedReply } from './types.js';

const replySchema = z.union([
  z.string(),
  z
    .object({
      text: z.string().optional(),
      doneReason: z.enum(['stop', 'length']).optional(),
      delayMs: z.number().int().nonnegative().optional(),
      chunkDelayMs: z.number().int().nonnegative().optional(),
      status: z.number().int().min(100).max(599).optional(),
      error: z.string().optional(),
    })
    .strict(),
]);

const regexSchema = z.string().refine(
  (source) => {
    try {
      new RegExp(source, 'i');
      return true;
    } catch {
      return false;
    }
  },
  { message: 'not a valid regular expression' },
);

const ruleSchema = z
  .object({
    match: regexSchema.optional(),
    purpose: regexSchema.optional(),
    prompt: regexSchema.optional(),
    reply: replySchema.optional(),
    replies: z.array(replySchema).min(1).optional(),
  })
  .strict()
  .refine((rule) => (rule.reply === undefined) !== (rule.replies === undefined), {
    message: 'a rule needs exactly one of "reply" or "replies"',
  });

const modelSpecSchema = z.union([
  z.string().min(1),
  z
    .object({
      name: z.string().min(1),
      kind: z.enum(['chat', 'embedding']).optional(),
      contextLength: z.number().int().positive().optional(),
      embeddingLength: z.number().int().positive().optional(),
    })
    .strict(),
]);

/** The schema of a script file (see the module documentation). */
export const scriptSchema = z
  .object({
    models: z.array(modelSpecSchema).optional(),
    embeddingDimensions: z.number().int().positive().optional(),
    registry: z.array(z.string()).optional(),
    version: z.string().optional(),
    rules: z.array(ruleSchema).default([]),
    default: replySchema.optional(),
  })
  .strict();

/** A parsed script file. */
export type Script = z.output<typeof scriptSchema>;

/** Parses and validates a script document. @throws Error naming the first invalid field */
export function parseScript(value: unknown): Script {
  const result = scriptSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new Error(`invalid script at ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return result.data;
}

/** Reads, parses and validates a script file. @throws Error for unreadable files, bad JSON or invalid rules */
export async function loadScript(path: string): Promise<Script> {
  const text = await readFile(path, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`script ${path} is not valid JSON: ${(error as Error).message}`);
  }
  return parseScript(json);
}

/** The chat handler a script describes (rules in order, then `default`). */
export function scriptHandler(script: Script): ScriptedChatHandler {
  const rules = script.rules.map((rule) => ({
    match: rule.match === undefined ? undefined : new RegExp(rule.match, 'i'),
    purpose: rule.purpose === undefined ? undefined : new RegExp(rule.purpose, 'i'),
    prompt: rule.prompt === undefined ? undefined : new RegExp(rule.prompt, 'i'),
    replies: rule.replies ?? [rule.reply!],
    used: 0,
  }));
  return (request: ScriptedChatRequest): ScriptedReply => {
    const purpose = request.purpose ?? '';
    const prompt = request.messages.map((m) => m.content).join('\n\n');
    for (const rule of rules) {
      if (rule.match && !rule.match.test(request.lastUserMessage) && !rule.match.test(purpose)) continue;
      if (rule.purpose && !rule.purpose.test(purpose)) continue;
      if (rule.prompt && !rule.prompt.test(prompt)) continue;
      const reply = rule.replies[Math.min(rule.used, rule.replies.length - 1)]!;
      rule.used += 1;
      return reply;
    }
    return script.default ?? { status: 500, error: 'scripted server: no reply programmed' };
  };
}

/** Server options from a script: models, embedding length, registry, version, and the rule handler. */
export function scriptOptions(script: Script): ScriptedOptions {
  return {
    chat: scriptHandler(script),
    ...(script.models ? { models: script.models } : {}),
    ...(script.embeddingDimensions ? { embeddingDimensions: script.embeddingDimensions } : {}),
    ...(script.registry ? { registry: script.registry } : {}),
    ...(script.version ? { version: script.version } : {}),
  };
}
