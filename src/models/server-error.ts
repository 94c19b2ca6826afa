/**
 * The error message a model server put in its error body, whatever shape the server uses. Local
 * servers disagree: OpenAI `{"error":{"message","type"}}`, llama.cpp the same with its own `type`
 * (and `n_prompt_tokens`/`n_ctx` on context errors), vLLM a top-level `{"object":"error","message"}`,
 * LM Studio and Ollama `{"error":"text"}`, FastAPI-based servers `{"detail": "text" | [{msg, loc}]}`.
 */

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** `detail` of a FastAPI validation error: `[{loc: ['body', 'stream_options'], msg: 'Extra inputs…'}]`. */
function detailText(detail: unknown): string | undefined {
  if (typeof detail === 'string') return text(detail);
  if (!Array.isArray(detail)) return undefined;
  const parts = detail.flatMap((item) => {
    if (!item || typeof item !== 'object') return [];
    const { msg, loc } = item as { msg?: unknown; loc?: unknown };
    const where = Array.isArray(loc) ? loc.filter((x) => x !== 'body').join('.') : '';
    const message = text(msg);
    return message ? [where ? `${where}: ${message}` : message] : [];
  });
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/**
 * The server's own message in a parsed error body, or undefined when the body has none. A
 * llama.cpp-style `type` is appended in parentheses (`… (exceed_context_size_error)`) because it
 * names the cause more precisely than the message does.
 */
export function serverErrorMessage(body: unknown): string | undefined {
  if (typeof body === 'string') return text(body);
  if (!body || typeof body !== 'object') return undefined;
  const record = body as Record<string, unknown>;
  const inner = record.error;
  if (typeof inner === 'string') return text(inner);
  if (inner && typeof inner === 'object') {
    const { message, type } = inner as { message?: unknown; type?: unknown };
    const main = text(message) ?? detailText((inner as { detail?: unknown }).detail);
    if (main) {
      const kind = text(type);
      return kind && !/^(server_error|invalid_request_error|error)$/.test(kind) && !main.includes(kind)
        ? `${main} (${kind})`
        : main;
    }
  }
  return text(record.message) ?? detailText(record.detail);
}

/** {@link serverErrorMessage} of a body given as text: JSON when it parses, else the text itself. */
export function serverErrorMessageOfText(body: string): string | undefined {
  try {
    return serverErrorMessage(JSON.parse(body));
  } catch {
    return text(body);
  }
}

/**
 * The reason for a request `fetch` refused to send because the URL's port is on the Fetch
 * standard's list of blocked ports (9, 25, 6000, …; undici says only "bad port"): no connection
 * was tried, so it is neither "connection refused" nor a server problem. Undefined for any other
 * error.
 */
export function blockedPortReason(error: unknown, url: string): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth += 1) {
    if (/^bad port$/i.test(current.message.trim())) {
      let port = 'this port';
      try {
        port = `port ${new URL(url).port || 'in the URL'}`;
      } catch {
        // the URL was checked when the settings were read; keep the general words
      }
      return `${port} is one Node's fetch never connects to, being reserved for another protocol, so nothing was sent; run the model server on another port and point the URL at it`;
    }
    current = (current as Error & { cause?: unknown }).cause;
  }
  return undefined;
}
