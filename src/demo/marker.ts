/** The marker of a finished demo shop, in its own module so that finding a demo loads nothing else. */

/** Name of the marker file written into a finished demo data directory (last, after every row). */
export const DEMO_MARKER_FILE = 'sqlrecall-demo.json';
