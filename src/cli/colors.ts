/**
 * Terminal colours for the CLI. Unlike picocolors' own default (which also switches colours on
 * whenever `CI` is set), colours appear only when a standard stream is a terminal, so piped output,
 * logs and files never carry escape codes. `NO_COLOR` turns them off, `FORCE_COLOR` on
 * (https://no-color.org, https://force-color.org).
 */
import { isatty } from 'node:tty';
import picocolors from 'picocolors';
import { processEnv } from '../config/env.js';

function colourWanted(env: NodeJS.ProcessEnv = processEnv()): boolean {
  if ('NO_COLOR' in env) return false;
  if ('FORCE_COLOR' in env) return env.FORCE_COLOR !== '0';
  return env.TERM !== 'dumb' && (isatty(1) || isatty(2));
}

/** The colour functions (`pc.red(text)` …), enabled per the rules above. */
export const pc = picocolors.createColors(colourWanted());
