/**
 * What the command line needs of the HTTP front end to run `sqlrecall serve`, as a type only.
 * The CLI and the HTTP server are sibling front ends and never import each other: the process entry
 * (`src/main.ts`) hands the CLI the server's {@link StartHttpServer} (`server/start.ts`), and the CLI
 * calls it with a runtime it built. Both sides depend on this module, which imports neither.
 */
import type { Config } from '../config/config.js';
import type { Runtime } from './runtime.js';

/** Terminal styles for the few notes the server prints at start (the CLI's colour choice). */
export interface NoteStyles {
  yellow(text: string): string;
  red(text: string): string;
  bold(text: string): string;
}

/** Inputs of {@link StartHttpServer}. */
export interface HttpServerStart {
  runtime: Runtime;
  config: Config;
  /** TCP port; 0: any free port. */
  port: number;
  /** Address to bind. */
  host: string;
  /** Personal access tokens (`users add`) instead of the configured user. */
  multiUser: boolean;
  /** Folder of the built web UI; undefined: the package's `dist/web`. */
  webRoot: string | undefined;
  /** Receives `Listening on http://…` (one line). */
  stdout: { write(text: string): unknown };
  /** Receives notes, warnings and the JSON access log. */
  stderr: { write(text: string): unknown };
  styles: NoteStyles;
}

/**
 * Starts the HTTP API and web UI and resolves once it has stopped (SIGINT or SIGTERM).
 * @throws SqlrecallError `usage` when the address cannot be bound; the runtime's errors as they come
 */
export type StartHttpServer = (options: HttpServerStart) => Promise<void>;

/** The front ends the command line can start but must not import (see the module comment). */
export interface FrontEnds {
  /** Loads the HTTP server when `serve` runs. */
  httpServer?: () => Promise<StartHttpServer>;
}

/** True for 127.0.0.0/8, ::1 and localhost: `serve` bound there needs no sign-in. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}
