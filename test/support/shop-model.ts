/**
 * The scripted model of the multi-process CLI tests on the demo shop: it learns what a message
 * teaches (memory extraction, compiling a taught fact, reconcile as ADD), answers every question with the order count, and
 * every answer prompt with one sentence.
 */
import { SQL_PROMPT_MARKER } from '../../src/agent/prompts.js';
import { messageOf } from './memory-fixtures.js';
import { compileFor, extractionFor } from './memory-pipeline.js';
import { type ScriptedOllama, type ScriptedReply, startScriptedOllama } from './scripted/server.js';

/** Starts that model (chat `qwen2.5-coder:7b`, embeddings `all-minilm`); close it when done. */
export function startShopModel(): Promise<ScriptedOllama> {
  return startScriptedOllama({
    models: ['qwen2.5-coder:7b', 'all-minilm'],
    chat: (request): ScriptedReply => {
      if (request.purpose === 'memory-extract') return extractionFor(messageOf(request.lastUserMessage));
      if (request.purpose === 'memory-reconcile') return JSON.stringify({ action: 'ADD', id: null });
      if (request.purpose === 'memory-compile') return compileFor(request.lastUserMessage);
      if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER))
        return '```sql\nSELECT count(*) AS n FROM orders\n```';
      return 'Here is the answer.';
    },
  });
}
