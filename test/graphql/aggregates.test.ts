// Aggregates over GraphQL (src/graphql/aggregates.ts): `<list>Aggregate` beside every top-level
// list, with the list's arguments and rights, the whole selection and its groups, answering what
// REST's select=count() answers, refused past the bounds, and charged before it runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COST_PER_POINT } from '../../src/graphql/pipeline/metering.js'
import { READ_ROWS } from '../../src/graphql/document-limits/cost-measure.js'
import { graphqlTypeDefs } from '../../src/features.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { codesOf, graphql } from '../helpers/graphql-client.js'
import { seedEmptyFeatures } from '../helpers/seeded-rows.js'

let t: TestApp
const ALLOWANCE = 100

beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_AUTHENTICATED_MAX: String(ALLOWANCE) })
  const make = createFactories(t)
  const post = await make.post(t.alice, { title: 'One' })
  await make.post(t.alice, { title: 'Two' })
  await make.draft(t.alice, { title: 'Draft' })
  await make.post(t.bob, { title: 'Three' })
  await make.comment(post, t.bob)
  await make.todo(t.alice)
  await seedEmptyFeatures(t.database.db)
}, 60_000)
afterAll(() => t.close())

/** The Query fields named `<list>Aggregate`, from the schema: one beside every top-level list. */
const aggregateFields = () => [...graphqlTypeDefs().matchAll(/^\s+(\w+)Aggregate\(/gm)].map(([, list]) => list!)

describe('<list>Aggregate', () => {
  it('counts what the REST collection counts, for every top-level list', async () => {
    const lists = aggregateFields()
    expect(lists.length).toBeGreaterThanOrEqual(6)
    for (const list of lists) {
      const answer = await graphql(t, `{ ${list}Aggregate { aggregate { count } } }`, { token: t.tokens.bob })
      expect(answer.body.errors, list).toBeUndefined()
      const rest = (await t.request({ method: 'GET', url: `/api/v1/${list}?select=count()`, token: t.tokens.bob })).json()
      expect((answer.body.data?.[`${list}Aggregate`] as { aggregate: { count: number } }).aggregate.count, list).toBe(rest.data[0].count)
    }
  })

  it('counts a draft only for whom it is visible, and groups by the fields asked', async () => {
    const query = `{ postsAggregate(groupBy: [userId, status]) { aggregate { count max { createdAt } } groups { keys { userId status } aggregate { count } } } }`
    const anonymous = await graphql(t, query)
    expect(anonymous.body.data?.postsAggregate).toMatchObject({
      aggregate: { count: 3, max: { createdAt: expect.any(String) } },
      groups: [
        { keys: { userId: String(t.alice.id), status: 'published' }, aggregate: { count: 2 } },
        { keys: { userId: String(t.bob.id), status: 'published' }, aggregate: { count: 1 } },
      ],
    })
    const owner = await graphql(t, query, { token: t.tokens.alice })
    expect((owner.body.data?.postsAggregate as { aggregate: { count: number } }).aggregate.count).toBe(4)
    expect((owner.body.data?.postsAggregate as { groups: unknown[] }).groups).toContainEqual({
      keys: { userId: String(t.alice.id), status: 'draft' },
      aggregate: { count: 1 },
    })
  })

  it("applies the list's arguments, and refuses a bad one as the list does", async () => {
    const filtered = await graphql(t, `{ postsAggregate(where: { userId: { eq: "${t.bob.id}" } }) { aggregate { count sum { userId } avg { userId } } } }`)
    expect(filtered.body.data?.postsAggregate).toEqual({ aggregate: { count: 1, sum: { userId: t.bob.id }, avg: { userId: t.bob.id } } })
    const refused = await graphql(
      t,
      `
        {
          postsAggregate(fields: ["nope"], q: "x") {
            aggregate {
              count
            }
          }
        }
      `,
    )
    expect(codesOf(refused)).toEqual(['BAD_REQUEST'])
  })

  it('is charged before it runs, as a read of the rows it may aggregate', async () => {
    const token = await t.tokenFor((await t.createUser({ name: 'Aggregator', email: 'aggregator@example.com' })).id)
    const answer = await graphql(
      t,
      `
        {
          todosAggregate {
            aggregate {
              count
            }
            groups {
              aggregate {
                count
              }
            }
          }
        }
      `,
      { token },
    )
    expect(answer.body.errors).toBeUndefined()
    expect(Number(answer.headers['x-ratelimit-cost'])).toBeGreaterThanOrEqual((2 * READ_ROWS.aggregate) / COST_PER_POINT)
  })
})
