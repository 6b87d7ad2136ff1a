// The export's formats, apart from the export: the command line lists them in --help without
// loading the database code (src/main.ts).

import type { DataFormatName } from '../data-section.js'

export const EXPORT_FORMATS = ['threadline', 'jsonplaceholder'] as const satisfies readonly DataFormatName[]
export type ExportFormat = (typeof EXPORT_FORMATS)[number]

export interface ExportOptions {
  format: ExportFormat
  /** The file to write (whole or not at all); stdout when absent. */
  output?: string
}
