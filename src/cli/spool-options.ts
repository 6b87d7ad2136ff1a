// The options of the commands that copy a stream aside (spool.ts), apart from the copying itself:
// src/main.ts declares them for every start, and loads spool.ts's code only for the commands that copy.

/** The hidden option that hands a copy to the process that reads it (src/main.ts). */
export const SPOOL_OPTION = '--spool'

/**
 * The most a pipe, a FIFO or a device may give, in MiB (--max-pipe-mb): 1 GiB, nearly five times
 * the 1,000,000-row file bench:import loads (218 MB). A regular file is read where it is, with no
 * such bound: a larger stream is saved to a file first.
 */
export const MAX_PIPE_MB = 1024
