/**
 * `sqlrecall mcp`: serves the Model Context Protocol over stdio for one user. The MCP SDK
 * is imported lazily here so other commands never load it. stdout carries only the protocol: logs,
 * warnings and `console.log` from any library go to stderr.
 */
import { packageVersion } from '../../config/version.js';
import { SqlrecallError } from '../../core/errors.js';
import { Runtime } from '../../runtime/runtime.js';
import { configFrom } from '../config-from.js';
import type { CliIO } from '../io.js';
import type { GlobalOptions } from '../program.js';
import { reportError } from '../report.js';

/** Options of `sqlrecall mcp`. */
export interface McpCommandOptions extends GlobalOptions {
  /** `--max-bytes N`: byte cap of each tool result's text (default 65536, least 1024). */
  maxBytes?: string;
}

/** Runs `mcp` until the client closes stdin (or SIGINT/SIGTERM). */
export async function runMcp(io: CliIO, opts: McpCommandOptions): Promise<number> {
  let lease: import('../../mcp/lease.js').RuntimeLease | undefined;
  try {
    const { DEFAULT_MCP_MAX_BYTES, MIN_MCP_MAX_BYTES } = await import('../../mcp/bounds.js');
    const maxBytes = opts.maxBytes === undefined ? DEFAULT_MCP_MAX_BYTES : Number(opts.maxBytes);
    if (!Number.isInteger(maxBytes) || maxBytes < MIN_MCP_MAX_BYTES)
      throw new SqlrecallError(
        'usage',
        `--max-bytes must be a whole number of at least ${MIN_MCP_MAX_BYTES}.`,
      );
    const config = configFrom(io, opts, { demoDefault: true });
    const log = (message: string) => io.stderr.write(`${message}\n`);
    // Nothing but the protocol may reach stdout, even from a library that logs.
    console.log = console.error;
    console.info = console.error;
    const { RuntimeLease, usesEmbeddedStores } = await import('../../mcp/lease.js');
    lease = new RuntimeLease(
      () => new Runtime(config, { warn: (m) => log(`note: ${m}`) }),
      usesEmbeddedStores(config),
    );
    const [{ createMcpServer }, { StdioServerTransport }] = await Promise.all([
      import('../../mcp/server.js'),
      import('@modelcontextprotocol/sdk/server/stdio.js'),
    ]);
    const server = createMcpServer({
      config,
      runtime: lease,
      maxBytes,
      log,
      version: packageVersion(),
    });
    // One message line is bounded: a longer one is answered with a JSON-RPC error and dropped,
    // and the server goes on (mcp/line-limit.ts).
    const { limitLines, oversizedReply } = await import('../../mcp/line-limit.js');
    const lines = io.stdin.pipe(
      limitLines((id, bytes) => {
        io.stdout.write(oversizedReply(id, bytes));
        log(`note: a message of ${bytes} bytes was refused (too large)`);
      }),
    );
    const transport = new StdioServerTransport(lines, io.stdout);
    const closed = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
      io.stdin.once('end', resolve);
      io.stdin.once('close', resolve);
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await server.connect(transport);
    log(
      `sqlrecall mcp: serving user ${config.user} on stdio (max ${config.maxRows} rows, ${maxBytes} bytes)`,
    );
    await closed;
    await server.close().catch(() => undefined);
    return 0;
  } catch (error) {
    return reportError(io, false, error);
  } finally {
    await lease?.close();
  }
}
