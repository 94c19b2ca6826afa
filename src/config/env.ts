/**
 * The process environment, read here and in `config.ts` only: every other module receives it (or a
 * value from it) through these accessors, so a test can see at a glance which variables exist
 * (`settings.ts` declares them) and no module reads one behind the configuration's back.
 */

/** The process environment (`process.env`), for modules that take an environment parameter. */
export function processEnv(): NodeJS.ProcessEnv {
  return process.env;
}

/** One variable of the process environment; undefined when unset. */
export function envVariable(name: string): string | undefined {
  return process.env[name];
}
