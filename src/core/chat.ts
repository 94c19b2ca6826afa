/**
 * Reading a chat model's reply stream as one result: the answer text, the reasoning apart from
 * it, structured tool calls joined per index, the finish reason and token counts.
 */
import { SqlrecallError } from './errors.js';
import type { ChatModel, ChatOptions, ChatPart, ChatRequest, ChatResult, ChatToolCall } from './ports.js';

/**
 * Collects `parts` into a {@link ChatResult}, calling `onToken` / `onThinking` with each piece as
 * it arrives. `started` is `performance.now()` when the call began (for `durationMs`).
 * @throws whatever the stream throws; a callback's error (the stream is then cancelled);
 *   SqlrecallError `model_output` for a stream that ended without its `finish` part
 */
export async function collectReply(
  parts: AsyncIterable<ChatPart>,
  options: Pick<ChatOptions, 'onToken' | 'onThinking'> = {},
  started: number = performance.now(),
): Promise<ChatResult> {
  let text = '';
  let thinking = '';
  const calls: Array<{ name: string; arguments: string }> = [];
  let finish: Extract<ChatPart, { type: 'finish' }> | undefined;
  for await (const part of parts) {
    switch (part.type) {
      case 'text-delta':
        text += part.text;
        options.onToken?.(part.text);
        break;
      case 'reasoning-delta':
        thinking += part.text;
        options.onThinking?.(part.text);
        break;
      case 'tool-call-delta': {
        calls[part.index] ??= { name: '', arguments: '' };
        const call = calls[part.index]!;
        call.name += part.name;
        call.arguments += part.arguments;
        break;
      }
      case 'finish':
        finish = part;
        break;
    }
  }
  if (!finish)
    throw new SqlrecallError('model_output', 'The model reply ended before the server said it was complete.');
  const toolCalls: ChatToolCall[] = calls.filter((c) => c && (c.name !== '' || c.arguments !== ''));
  return {
    text,
    finishReason: finish.finishReason,
    usage: finish.usage,
    durationMs: performance.now() - started,
    ...(thinking ? { thinking } : {}),
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
  };
}

/**
 * One reply of `chat` as a whole: streams it and collects the parts ({@link collectReply}).
 * @throws SqlrecallError `model_unreachable`, `model_missing`, `model_output`, `model_timeout`;
 *   the signal's reason when aborted; a callback's own error
 */
export function generateText(
  chat: ChatModel,
  request: ChatRequest,
  options: ChatOptions = {},
): Promise<ChatResult> {
  const started = performance.now();
  const { signal } = options;
  return collectReply(chat.stream(request, signal ? { signal } : {}), options, started);
}
