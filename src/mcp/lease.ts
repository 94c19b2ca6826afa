/**
 * Lends the MCP server's {@link Runtime} to tool calls. An MCP server runs for hours in the
 * background; when it uses embedded PGlite data directories (the memory store under
 * SQLRECALL_HOME, or a `pglite:` database), which one process at a time may open, it releases
 * them whenever no call is running, so `sqlrecall ask` in a terminal is not blocked meanwhile.
 * With server PostgreSQL for both, the runtime is kept open for the life of the process.
 */
import type { Config } from '../config/config.js';
import type { Runtime } from '../runtime/runtime.js';

/** True when the configuration opens an embedded data directory (see the module comment). */
export function usesEmbeddedStores(config: Config): boolean {
  const memoryEmbedded = config.memoryEnabled && !config.memoryDatabaseUrl;
  const databaseEmbedded = (config.databaseUrl ?? '').startsWith('pglite:');
  return memoryEmbedded || databaseEmbedded;
}

/** A runtime shared by concurrent calls, closed when idle if `releaseWhenIdle`. */
export class RuntimeLease {
  private current: Runtime | undefined;
  private active = 0;
  private closing: Promise<void> | undefined;

  /**
   * @param make builds a fresh runtime (called lazily, again after each idle release)
   * @param releaseWhenIdle close the runtime as soon as no call uses it
   */
  constructor(
    private readonly make: () => Runtime,
    private readonly releaseWhenIdle: boolean,
  ) {}

  /** Runs `fn` with the runtime; concurrent calls share one runtime. */
  async use<T>(fn: (runtime: Runtime) => Promise<T>): Promise<T> {
    while (this.closing) await this.closing;
    this.current ??= this.make();
    const runtime = this.current;
    this.active += 1;
    try {
      return await fn(runtime);
    } finally {
      this.active -= 1;
      if (this.active === 0 && this.releaseWhenIdle && this.current === runtime) {
        this.current = undefined;
        const closing = runtime.close().catch(() => undefined);
        this.closing = closing;
        await closing;
        if (this.closing === closing) this.closing = undefined;
      }
    }
  }

  /** Closes the runtime (end of the process). */
  async close(): Promise<void> {
    const runtime = this.current;
    this.current = undefined;
    await this.closing;
    await runtime?.close();
  }
}
