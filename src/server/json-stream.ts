/**
 * A JSON document as a stream of small chunks: the `rows` array is encoded one row per
 * chunk, so a result near the byte budget never becomes one giant string plus its UTF-8 copy in
 * the server's memory. The text is the same JSON as `JSON.stringify(document)` would give (keys in
 * order, `undefined` members left out), without indentation.
 */

/** Yields the JSON text of `document` piece by piece; `rows` (an array) one row per piece. */
export function* jsonChunks(document: Record<string, unknown>): Generator<string> {
  let first = true;
  yield '{';
  for (const [key, value] of Object.entries(document)) {
    if (value === undefined) continue;
    const prefix = `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    if (key === 'rows' && Array.isArray(value)) {
      yield `${prefix}[`;
      for (const [i, row] of value.entries()) yield `${i === 0 ? '' : ','}${JSON.stringify(row)}`;
      yield ']';
    } else {
      yield `${prefix}${JSON.stringify(value)}`;
    }
  }
  yield '}';
}

/**
 * A `Response` streaming `document` as `application/json` (pull-based: the next row is encoded
 * only when the client has taken the previous ones).
 * @param status HTTP status (default 200)
 */
export function streamJsonResponse(document: Record<string, unknown>, status = 200): Response {
  const chunks = jsonChunks(document);
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    cancel() {
      chunks.return(undefined);
    },
  });
  return new Response(body, { status, headers: { 'content-type': 'application/json; charset=UTF-8' } });
}
