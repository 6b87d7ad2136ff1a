// docs/pipeline.md, written from the list of stages in src/http/pipeline.ts (npm run docs:pipeline);
// test/http/pipeline.test.ts fails when the file and the list differ.
import { writeFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { PIPELINE, type PipelineStage, type Step, type StepHook } from '../src/http/pipeline.js'

export const PIPELINE_DOC_PATH = fileURLToPath(new URL('../docs/pipeline.md', import.meta.url))

/** What Node and Fastify do themselves before a phase's hooks, in the flow: what, and what it may reject. */
const BEFORE_PHASE: Partial<Record<StepHook, readonly (readonly [string, string])[]>> = {
  onRequest: [
    ["Node's parser", 'malformed request line/headers → 400 (onClientError)'],
    ['router', 'malformed URL → 400; over-long parameter → 404 (onFrameworkError)'],
  ],
  preValidation: [['body parser', 'not JSON → 415; over 1 MiB → 413; malformed → 400; __proto__ → 400']],
  preHandler: [['validation (TypeBox/Ajv)', 'body → 422 with details; query → 400 with details; params → 404']],
  preSerialization: [['handler → service', 'rules: 401/403/404/409 as AppError']],
  onSend: [['serializer', 'response schema: only declared fields leave (no password hash)']],
}

/** The width of a flow line's first column. */
const LABEL = 32

/** The phases of a request, in the order Fastify runs them. */
const PHASES: readonly StepHook[] = ['onRequest', 'preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend', 'onResponse']

const ERROR_HANDLER = [
  `  → ${'error handler'.padEnd(LABEL)} every error → {error: {code, message, details?}}; unknown → 500 masked`,
  `    ${''.padEnd(LABEL)} (under /graphql and /graphql/stream: {errors: [{message, extensions: {code}}]})`,
]

const when = (step: Step) => (step.when === undefined ? '' : ` (${step.when})`)

function flow(): string[] {
  const lines = ['As each route is registered']
  for (const stage of PIPELINE) {
    for (const step of stage.steps.filter((candidate) => candidate.hook === 'onRoute')) {
      lines.push(`  → ${`onRoute: ${step.name}`.padEnd(LABEL)} [${stage.name}] ${step.does}${when(step)}`)
    }
  }
  lines.push('', 'HTTP request')
  for (const phase of PHASES) {
    for (const [what, rejects] of BEFORE_PHASE[phase] ?? []) lines.push(`  → ${what.padEnd(LABEL)} ${rejects}`)
    for (const stage of PIPELINE) {
      for (const step of stage.steps.filter((candidate) => candidate.hook === phase)) {
        lines.push(`  → ${`${phase}: ${step.name}`.padEnd(LABEL)} [${stage.name}] ${step.does}${when(step)}`)
      }
    }
  }
  lines.push(...ERROR_HANDLER)
  return lines
}

function stageSection(stage: PipelineStage, index: number): string[] {
  const rows = stage.steps.map(
    (step) => `| ${step.perRoute === true ? `${step.hook} (the route's own)` : step.hook} | ${step.name} | ${step.does.replaceAll('|', '\\|')}${when(step)} |`,
  )
  return [`### ${index + 1}. ${stage.name}`, '', stage.summary, '', '| hook | step | what it does, what it may reject |', '| --- | --- | --- |', ...rows, '']
}

export function renderPipelineDoc(): string {
  return [
    '# The request pipeline',
    '',
    '<!-- Written by `npm run docs:pipeline` from src/http/pipeline.ts; test/http/pipeline.test.ts fails when they differ. -->',
    '',
    'Every HTTP request meets the stages of `src/http/pipeline.ts`, in the order that file lists them:',
    'each stage is a plugin that owns its hooks and their per-request state, and `buildApp` registers',
    "the stages before any route. In each phase of Fastify's lifecycle the stages' hooks run in the",
    "stages' order (test/http/pipeline.test.ts checks it on requests through the app). A hook that",
    'refuses ends the phase: the error handler answers, and the `onSend` and `onResponse` hooks still run.',
    '',
    '## In the order a request meets it',
    '',
    '```',
    ...flow(),
    '```',
    '',
    '## The stages',
    '',
    ...PIPELINE.flatMap(stageSection),
  ]
    .join('\n')
    .replace(/\n+$/, '\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(PIPELINE_DOC_PATH, renderPipelineDoc())
}
