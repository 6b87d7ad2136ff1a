// The HTTP pipeline runs as src/http/pipeline.ts declares it: requests through the app meet, in each
// phase of Fastify's lifecycle, the stages' hooks in the stages' order, and only in the phases each
// stage declares; docs/pipeline.md is the one written from that list.
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PIPELINE } from '../../src/http/pipeline.js'
import { PIPELINE_DOC_PATH, renderPipelineDoc } from '../../scripts/pipeline-doc.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

let t: TestApp
let seen: { stage: string; hook: string }[] = []
beforeAll(async () => {
  t = await buildTestApp({ CORS_ORIGINS: 'https://app.example', METRICS: 'true' }, { observePipeline: (stage, hook) => seen.push({ stage, hook }) })
})
afterAll(() => t.close())

const STAGE_ORDER = new Map(PIPELINE.map((stage, index) => [stage.name, index]))

/** The hooks `send` meets, as [hook, stage] in the order they ran. */
async function hooksMetBy(send: () => Promise<unknown>): Promise<{ stage: string; hook: string }[]> {
  seen = []
  await send()
  // onResponse runs once the answer is written, after inject resolves.
  await new Promise((resolve) => setImmediate(resolve))
  return seen
}

/** The stages each phase's hooks ran in, in order. */
function stagesByPhase(met: readonly { stage: string; hook: string }[]): Map<string, string[]> {
  const phases = new Map<string, string[]>()
  for (const { stage, hook } of met) phases.set(hook, [...(phases.get(hook) ?? []), stage])
  return phases
}

const inDeclaredOrder = (stages: readonly string[]) => [...stages].sort((a, b) => (STAGE_ORDER.get(a) ?? -1) - (STAGE_ORDER.get(b) ?? -1))

describe('the HTTP pipeline', () => {
  const requests = {
    'a signed-in read of the API': () => t.request({ url: `/api/v1/users/${t.alice.id}`, token: t.tokens.alice, headers: { 'accept-encoding': 'gzip' } }),
    'a write with an Idempotency-Key and Prefer': () =>
      t.request({
        method: 'POST',
        url: `/api/v1/users/${t.alice.id}/posts`,
        token: t.tokens.alice,
        headers: { 'idempotency-key': `pipeline-${Date.now()}`, prefer: 'return=minimal', origin: 'https://app.example' },
        json: { title: 'Through the pipeline', content: 'Stage by stage' },
      }),
    'a refused request': () => t.request({ url: `/api/v1/users/${t.alice.id}`, token: 'not-a-token' }),
    'a GraphQL query': () => t.request({ method: 'POST', url: '/graphql', json: { query: '{ __typename }' } }),
  }

  it.each(Object.entries(requests))('runs the stages of each phase in their declared order: %s', async (_name, send) => {
    const met = await hooksMetBy(send)
    expect(met.length).toBeGreaterThan(0)
    for (const [phase, stages] of stagesByPhase(met)) expect({ phase, stages }).toEqual({ phase, stages: inDeclaredOrder(stages) })
  })

  it('meets every stage, each only in the phases it declares', async () => {
    const met: { stage: string; hook: string }[] = []
    for (const send of Object.values(requests)) met.push(...(await hooksMetBy(send)))
    const declared = new Map(PIPELINE.map((stage) => [stage.name, new Set<string>(stage.steps.map((step) => step.hook))]))
    for (const { stage, hook } of met) expect({ stage, hook, declared: declared.get(stage)?.has(hook) }).toEqual({ stage, hook, declared: true })
    // The request span is the only hook left out: tracing is off here.
    expect(new Set(met.map(({ stage }) => stage))).toEqual(new Set(PIPELINE.map((stage) => stage.name)))
  })

  it('is described by docs/pipeline.md as the list declares it (npm run docs:pipeline writes it)', () => {
    expect(readFileSync(PIPELINE_DOC_PATH, 'utf8')).toBe(renderPipelineDoc())
  })
})
