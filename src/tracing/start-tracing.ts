// Traces, when the OTEL_* variables ask for them (config.tracing): the one module of src/tracing/
// that the app loads whatever the config. Off, it returns nothing, and nothing else of tracing (nor
// OpenTelemetry's SDK) is ever loaded: no hook, no wrapper, no observer is installed. On, the rest
// is imported and the app hands each part its instrumentation (src/app.ts).
import type { TracingConfig } from '../config.js'
import type { Tracing, TracingOptions } from './tracing.js'

export type { Tracing, TracingOptions }

/** The tracing of one app, or undefined when the config leaves it off. */
export async function startTracing(config: TracingConfig | undefined, options: TracingOptions): Promise<Tracing | undefined> {
  if (config === undefined) return undefined
  const { createTracing } = await import('./create-tracing.js')
  return createTracing(config, options)
}
