/**
 * A full disk under an embedded PGlite data directory. PostgreSQL reports the failed write (for
 * example a new 16 MiB WAL segment: "could not write to file "pg_wal/xlogtemp.N": No space left on
 * device", SQLSTATE 53100), but the WebAssembly backend of PGlite 0.5 is not usable afterwards: the
 * next statement, a ROLLBACK included, loops inside the backend forever, holding the process's only
 * thread at 100 % CPU (so not even SIGTERM is handled). The guard therefore
 *
 * - refuses a write before it starts while the directory's file system has less than
 *   {@link MIN_FREE_BYTES} free (then nothing reaches the backend, which stays healthy), and
 * - after a disk-full error (or an abort of the backend) marks the instance stopped: every later
 *   call fails at once with {@link DiskFullError}, none reaches the backend, and closing it is
 *   skipped (the process frees it when it exits). Free space, then restart the process.
 */
import { statfsSync } from 'node:fs';

/**
 * Least free space before a write: 64 MiB. PostgreSQL writes a new WAL segment whole (16 MiB,
 * PGlite's `wal_segment_size`) before using it; four of them, plus the pages of the write.
 */
export const MIN_FREE_BYTES = 64 * 1024 * 1024;

/** SQLSTATE disk_full. */
export const DISK_FULL = '53100';

/** A refused or failed use of an embedded data directory whose disk is full (SQLSTATE 53100). */
export class DiskFullError extends Error {
  readonly code = DISK_FULL;
  constructor(
    message: string,
    readonly dir: string,
    /** Free bytes of the file system when measured, if known. */
    readonly freeBytes?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DiskFullError';
  }
}

function formatMiB(bytes: number): string {
  return `${Number((bytes / 1024 / 1024).toFixed(1))} MiB`;
}

/** True when `error` is a disk-full failure: SQLSTATE 53100, ENOSPC, or its message. */
export function isDiskFull(error: unknown): boolean {
  const fields = error as { code?: unknown; message?: unknown } | null;
  if (fields?.code === DISK_FULL || fields?.code === 'ENOSPC') return true;
  return typeof fields?.message === 'string' && /no space left on device/i.test(fields.message);
}

/** True when `error` is an abort of the WebAssembly backend itself (not a database error). */
function isBackendAbort(error: unknown): boolean {
  return (
    error instanceof Error && (error.name === 'RuntimeError' || /^Aborted\(|unreachable/.test(error.message))
  );
}

/** One data directory's guard, shared by everything that uses its instance (see the module comment). */
export class DiskGuard {
  private stoppedBy: DiskFullError | undefined;

  /**
   * @param dir the data directory (named in messages)
   * @param minFreeBytes least free space before a write; default {@link MIN_FREE_BYTES}
   * @param freeBytes measures the free space of `dir`'s file system (tests pass their own)
   */
  constructor(
    readonly dir: string,
    private readonly minFreeBytes = MIN_FREE_BYTES,
    private readonly freeBytes: (dir: string) => number | undefined = measureFree,
  ) {}

  /** True once the instance must not be used again. */
  get stopped(): boolean {
    return this.stoppedBy !== undefined;
  }

  /**
   * Throws when the instance is stopped, or, with `write`, when the disk has less than the least
   * free space.
   * @throws DiskFullError
   */
  check(write: boolean): void {
    if (this.stoppedBy) throw this.stoppedBy;
    if (!write) return;
    const free = this.freeBytes(this.dir);
    if (free !== undefined && free < this.minFreeBytes)
      throw new DiskFullError(
        `No space left on device for ${this.dir}: ${formatMiB(free)} free, at least ${formatMiB(this.minFreeBytes)} needed before a write.`,
        this.dir,
        free,
      );
  }

  /**
   * Looks at an error of the instance: a disk-full error or an abort stops it. Returns the error
   * to throw (a {@link DiskFullError} naming the directory for those, `error` otherwise).
   */
  note(error: unknown): unknown {
    if (this.stoppedBy) return this.stoppedBy;
    if (!isDiskFull(error) && !isBackendAbort(error)) return error;
    const free = this.freeBytes(this.dir);
    const reason = isDiskFull(error) ? 'no space left on device' : 'its database engine stopped';
    this.stoppedBy = new DiskFullError(
      `No space left on device for ${this.dir}: a write failed (${reason}${free === undefined ? '' : `, ${formatMiB(free)} free`}) and the embedded database cannot be used again in this process; free space on that disk, then restart sqlrecall.`,
      this.dir,
      free,
      { cause: error },
    );
    return this.stoppedBy;
  }

  /** Notes a disk-full error seen in an exchange served to another process (its SQLSTATE). */
  noteDiskFull(): void {
    this.note(Object.assign(new Error('No space left on device'), { code: DISK_FULL }));
  }
}

/** Free bytes for an unprivileged process on `dir`'s file system, or undefined when unknown. */
function measureFree(dir: string): number | undefined {
  try {
    const stats = statfsSync(dir);
    return Number(stats.bavail) * Number(stats.bsize);
  } catch {
    return undefined;
  }
}
