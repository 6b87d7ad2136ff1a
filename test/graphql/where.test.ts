// The list fields' `where` argument: per-type operator inputs (IntFilter, IDFilter, StringFilter,
// RoleFilter, DateTimeFilter, and their Nullable variants with `null`) read as REST's
// field[op]=value by the one collection query parser: the same rows, the same refusals (naming
// `field[op]`), cursors bound to the conditions; with the JIT on and off.
import { buildSchema, type GraphQLInputObjectType, type GraphQLSchema, getNamedType, isInputObjectType, isObjectType } from 'graphql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { operatorsOf } from '../../src/collections/collection-query.js'
import type { CollectionSpec, FieldSpec } from '../../src/collections/collection-spec.js'
import { UsersCollection } from '../../src/users/users.schemas.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { codesOf, graphql, type GraphQLAnswer } from '../helpers/graphql-client.js'

/** The users made here besides admin (no age), alice (no age) and bob (41), with the instants they were created at. */
const PEOPLE = [
  { name: 'Carol', age: 30, createdAt: '2024-01-01T00:00:00.000Z' },
  { name: 'Dave', age: 50, createdAt: '2024-01-02T00:00:00.000Z' },
  { name: 'Erin', age: 29, createdAt: '2024-01-03T00:00:00.000Z' },
  { name: 'Smith, Jo', age: null, createdAt: '2024-01-04T00:00:00.000Z' },
] as const

describe.each([
  { jit: 'true', label: 'with the JIT' },
  { jit: 'false', label: 'without the JIT' },
])('GraphQL where $label', ({ jit }) => {
  let t: TestApp
  /** Name → id, for every user. */
  const id: Record<string, string> = {}

  beforeAll(async () => {
    t = await buildTestApp({ GRAPHQL_JIT: jit })
    for (const user of [t.admin, t.alice, t.bob]) id[user.name] = String(user.id)
    for (const [i, person] of PEOPLE.entries()) {
      const user = await t.createUser({ name: person.name, email: `person${i}@example.com`, ...(person.age === null ? {} : { age: person.age }) })
      await t.database.db.updateTable('users').set({ created_at: person.createdAt }).where('id', '=', user.id).execute()
      id[person.name] = String(user.id)
    }
    // The three made by the test app were created now, after everyone above.
  })
  afterAll(() => t.close())

  /** Runs a document twice (the second run is the compiled one when the JIT is on): both answers must agree. */
  async function twice(query: string, variables?: Record<string, unknown>): Promise<GraphQLAnswer> {
    const first = await graphql(t, query, { variables })
    const second = await graphql(t, query, { variables })
    expect(second.body).toEqual(first.body)
    return first
  }

  /** The names of the users a `users(...)` selection answers, in order; fails on errors. */
  async function names(args: string, variables?: Record<string, unknown>, declared = ''): Promise<string[]> {
    const answer = await twice(`query${declared} { users(${args}, limit: 100) { name } }`, variables)
    expect(answer.body.errors).toBeUndefined()
    return (answer.body.data?.users as { name: string }[]).map((user) => user.name)
  }

  it.each([
    ['age: {eq: 41}', ['Bob']],
    ['age: {ne: 41}', ['Ada Admin', 'Alice', 'Carol', 'Dave', 'Erin', 'Smith, Jo']],
    ['age: {gt: 30}', ['Bob', 'Dave']],
    ['age: {gte: 30, lt: 50}', ['Bob', 'Carol']],
    ['age: {lte: 30}', ['Carol', 'Erin']],
    ['age: {in: [29, 50]}', ['Dave', 'Erin']],
    ['age: {in: [29, null]}', ['Ada Admin', 'Alice', 'Erin', 'Smith, Jo']],
    ['age: {in: []}', []],
    ['age: {null: true}', ['Ada Admin', 'Alice', 'Smith, Jo']],
    ['age: {null: false}', ['Bob', 'Carol', 'Dave', 'Erin']],
    ['age: {eq: null}', ['Ada Admin', 'Alice', 'Smith, Jo']],
  ])('compares a nullable integer with NullableIntFilter: where: {%s}', async (where, expected) => {
    expect(await names(`where: {${where}}`)).toEqual(expected)
  })

  it('compares ids with IDFilter: eq, ne, ranges and in', async () => {
    expect(await names(`where: {id: {eq: "${id.Carol}"}}`)).toEqual(['Carol'])
    expect(await names(`where: {id: {gt: "${id.Carol}", lte: "${id.Erin}"}}`)).toEqual(['Dave', 'Erin'])
    expect(await names(`where: {id: {gte: "${id.Erin}", lt: "${id.Erin}"}}`)).toEqual([])
    expect(await names(`where: {id: {in: ["${id.Bob}", "${id.Dave}"]}}`)).toEqual(['Bob', 'Dave'])
    const all = await names('where: {}')
    expect(await names(`where: {id: {ne: "${id.Bob}"}}`)).toEqual(all.filter((name) => name !== 'Bob'))
  })

  it('compares text with StringFilter: eq, ne, ranges, in (a value holding a comma stays one value), e-mail without regard to case', async () => {
    expect(await names('where: {name: {eq: "Alice"}}')).toEqual(['Alice'])
    expect(await names('where: {name: {gte: "B", lt: "D"}}')).toEqual(['Bob', 'Carol'])
    expect(await names('where: {name: {gt: "Dave", lte: "Erin"}}')).toEqual(['Erin'])
    expect(await names('where: {name: {in: ["Smith, Jo", "Erin"]}}')).toEqual(['Erin', 'Smith, Jo'])
    expect(await names('where: {name: {in: ["Smith"]}}')).toEqual([])
    expect(await names('where: {name: {ne: "Alice"}, age: {null: true}}')).toEqual(['Ada Admin', 'Smith, Jo'])
    expect(await names('where: {email: {eq: "ALICE@Example.com"}}')).toEqual(['Alice'])
  })

  it('compares an enumeration with RoleFilter: eq, ne, in', async () => {
    expect(await names('where: {role: {eq: admin}}')).toEqual(['Ada Admin'])
    expect(await names('where: {role: {ne: admin}, age: {null: false}}')).toEqual(['Bob', 'Carol', 'Dave', 'Erin'])
    expect(await names('where: {role: {in: [admin, user]}, name: {lt: "B"}}')).toEqual(['Ada Admin', 'Alice'])
  })

  it('compares instants with DateTimeFilter, whatever offset they are written with', async () => {
    expect(await names('where: {createdAt: {lt: "2024-01-03T00:00:00Z"}}')).toEqual(['Carol', 'Dave'])
    expect(await names('where: {createdAt: {gte: "2024-01-02T01:00:00+01:00", lte: "2024-01-03T00:00Z"}}')).toEqual(['Dave', 'Erin'])
    expect(await names('where: {createdAt: {gt: "2024-01-03T23:00:00-01:00", lt: "2025-01-01T00:00:00Z"}}')).toEqual([])
    expect(await names('where: {createdAt: {eq: "2024-01-01T05:30:00+05:30"}}')).toEqual(['Carol'])
    expect(await names('where: {createdAt: {in: ["2024-01-01T00:00:00.000Z", "2024-01-04T00:00:00Z"]}}')).toEqual(['Carol', 'Smith, Jo'])
    expect(await names('where: {createdAt: {ne: "2024-01-01T00:00:00Z", lt: "2024-01-03T00:00:00Z"}}')).toEqual(['Dave'])
    // The three the test app made were created just now.
    expect(await names('where: {updatedAt: {gt: "2024-12-31T00:00:00Z"}, createdAt: {gte: "2025-01-01T00:00:00Z"}}')).toEqual(['Ada Admin', 'Alice', 'Bob'])
    expect(await names('where: {createdAt: {lt: $before}}', { before: '2024-01-02T00:00:00Z' }, '($before: DateTime!)')).toEqual(['Carol'])
  })

  it('takes where from variables', async () => {
    const where = { age: { gte: 30 }, role: { in: ['user'] }, createdAt: { lt: '2024-01-02T00:00:00.000Z' } }
    expect(await names('where: $where', { where }, '($where: UserWhere)')).toEqual(['Carol'])
  })

  it('combines where and filter: both must hold', async () => {
    expect(await names('filter: {age: [29, 30, 41]}, where: {age: {gte: 30}}')).toEqual(['Bob', 'Carol'])
    expect(await names('filter: {role: [user]}, where: {age: {null: true}}')).toEqual(['Alice', 'Smith, Jo'])
    expect(await names('filter: {age: [null]}, where: {name: {gte: "B"}}')).toEqual(['Smith, Jo'])
  })

  it('sorts and searches the rows where selects', async () => {
    expect(await names('where: {age: {gte: 30}}, sort: "-age"')).toEqual(['Dave', 'Bob', 'Carol'])
    expect(await names('where: {age: {null: false}}, q: "e", fields: ["name"]')).toEqual(['Dave', 'Erin'])
  })

  it('pages usersPage with where by cursor, and binds the cursor to where', async () => {
    const query =
      'query($where: UserWhere, $cursor: String) { usersPage(where: $where, limit: 2, cursor: $cursor) { items { name } pageInfo { nextCursor hasMore } } }'
    const where = { age: { null: false } }
    type Page = { items: { name: string }[]; pageInfo: { nextCursor: string | null; hasMore: boolean } }
    const first = (await twice(query, { where })).body.data?.usersPage as Page
    expect(first.items.map((user) => user.name)).toEqual(['Bob', 'Carol'])
    const second = (await twice(query, { where, cursor: first.pageInfo.nextCursor })).body.data?.usersPage as Page
    expect(second).toEqual({ items: [{ name: 'Dave' }, { name: 'Erin' }], pageInfo: { nextCursor: null, hasMore: false } })

    for (const other of [{ age: { null: true } }, { age: { null: false, gte: 0 } }, undefined]) {
      const refused = await twice(query, { where: other, cursor: first.pageInfo.nextCursor })
      expect(codesOf(refused)).toEqual(['BAD_REQUEST'])
      expect(refused.body.errors?.[0]?.extensions?.details).toEqual([{ field: 'cursor', message: expect.any(String) as string }])
    }
  })

  it.each([
    ['an id past 32 bits', 'where: {id: {eq: "99999999999"}}', ['id[eq]']],
    ['an id that is not a number', 'where: {id: {in: ["1", "one"]}}', ['id[in]']],
    ['NUL in text', 'where: {name: {gte: "\\u0000"}}', ['name[gte]']],
    ['null on a field never missing', 'where: {name: {eq: null}}', ['name[eq]']],
    ['a range compared with null', 'where: {age: {gt: null}}', ['age[gt]']],
    ['more than 100 values in a list', `where: {age: {in: [${Array.from({ length: 101 }, (_, i) => i).join(', ')}]}}`, ['age[in]']],
    ['two bad operators and a bad sort', 'where: {id: {lt: "x"}, email: {ne: "\\u0000"}}, sort: "nope"', ['id[lt]', 'email[ne]', 'sort']],
  ])('refuses %s with BAD_REQUEST naming field[op] in extensions.details, as the REST parser does', async (_what, args, fields) => {
    const answer = await twice(`{ users(${args}) { id } }`)
    expect(codesOf(answer)).toEqual(['BAD_REQUEST'])
    expect(answer.body.data).toBeNull()
    const details = answer.body.errors?.[0]?.extensions?.details as { field: string; message: string }[]
    expect(details.map((detail) => detail.field).sort()).toEqual([...fields].sort())
    for (const detail of details) expect(detail.message).not.toBe('')
  })

  it.each([
    ['a range on an enumeration', 'where: {role: {gt: admin}}'],
    ['null on a field never missing', 'where: {createdAt: {null: true}}'],
    ['a field that cannot be filtered', 'where: {avatar: {eq: "x"}}'],
    ['an integer past 32 bits', 'where: {age: {gte: 2147483648}}'],
    ['an operator that does not exist', 'where: {age: {like: 3}}'],
  ])('refuses %s while validating the document, as the types say', async (_what, args) => {
    const answer = await twice(`{ users(${args}) { id } }`)
    expect(codesOf(answer)).toEqual(['BAD_REQUEST'])
    expect(answer.body.data).toBeUndefined()
    expect(answer.body.errors?.[0]?.locations).toBeDefined()
  })

  it('answers the same users as the REST query string with the same operators', async () => {
    const cases: [string, string][] = [
      ['age[gte]=30&age[lt]=50&role[in]=user&sort=-age', 'where: {age: {gte: 30, lt: 50}, role: {in: [user]}}, sort: "-age"'],
      ['age[null]=true&name[ne]=Alice', 'where: {age: {null: true}, name: {ne: "Alice"}}'],
      [
        'createdAt[gte]=2024-01-02T00:00:00Z&createdAt[lt]=2024-06-01T00:00:00%2B02:00',
        'where: {createdAt: {gte: "2024-01-02T00:00:00Z", lt: "2024-06-01T00:00:00+02:00"}}',
      ],
      [`id[in]=${id.Bob},${id.Erin}&age[ne]=41`, `where: {id: {in: ["${id.Bob}", "${id.Erin}"]}, age: {ne: 41}}`],
      ['name[gte]=B&name[lte]=E&role=user', 'filter: {role: [user]}, where: {name: {gte: "B", lte: "E"}}'],
    ]
    for (const [queryString, args] of cases) {
      const rest = await t.request({ method: 'GET', url: `/api/v1/users?${queryString}&limit=100` })
      expect(rest.statusCode, queryString).toBe(200)
      const restIds = rest.json<{ data: { id: number }[] }>().data.map((user) => String(user.id))
      const answer = await twice(`{ users(${args}, limit: 100) { id } }`)
      expect(answer.body.errors, args).toBeUndefined()
      expect(
        (answer.body.data?.users as { id: string }[]).map((user) => user.id),
        args,
      ).toEqual(restIds)
      expect(restIds.length, queryString).toBeGreaterThan(0)
    }
  })
})

describe('the where inputs in the schema', () => {
  let schema: GraphQLSchema
  /** The collections REST lists, in the order of their routes (the features'), and the GraphQL type of their items. */
  const collections: { type: string; spec: CollectionSpec }[] = []
  const specs = new Map<string, CollectionSpec>()
  beforeAll(async () => {
    const t = await buildTestApp(
      {},
      {
        onRoute: (route) => {
          const spec = route.config?.collection
          if (route.method === 'GET' && spec !== undefined && !specs.has(spec.name)) specs.set(spec.name, spec)
        },
      },
    )
    try {
      schema = buildSchema((await t.app.inject({ url: '/graphql/schema.graphql' })).body)
      const query = schema.getQueryType()?.getFields() ?? {}
      for (const spec of specs.values()) {
        const field = query[spec.name]
        if (field !== undefined) collections.push({ type: getNamedType(field.type).name, spec })
      }
    } finally {
      await t.close()
    }
  })

  const input = (name: string): GraphQLInputObjectType => {
    const type = schema.getType(name)
    if (!isInputObjectType(type)) throw new Error(`${name} is not an input type`)
    return type
  }
  const operatorFieldsOf = (name: string) => Object.keys(input(name).getFields())

  it('gives every list field that takes filter a where of its type, described', () => {
    const query = schema.getQueryType()
    if (!isObjectType(query)) throw new Error('no Query type')
    const lists = Object.values(query.getFields()).filter((field) => field.args.some((arg) => arg.name === 'filter'))
    expect(collections.map(({ type }) => type)).toEqual(expect.arrayContaining(['User', 'Post']))
    expect(lists.map((field) => field.name)).toEqual(
      collections.flatMap(({ spec }) => [spec.name, `${spec.name}Aggregate`, `${spec.name}Page`, `${spec.name}Connection`]),
    )
    for (const field of lists) {
      const { type } = collections.find(({ spec }) => field.name.startsWith(spec.name)) ?? {}
      const where = field.args.find((arg) => arg.name === 'where')
      expect(getNamedType(where?.type)?.name).toBe(`${type}Where`)
      expect(getNamedType(field.args.find((arg) => arg.name === 'filter')?.type)?.name).toBe(`${type}Filter`)
      expect(where?.description).toMatch(/field\[op\]/)
    }
  })

  it('gives the Where input of each collection every filterable field of it, each with the operators the parser takes on it', () => {
    for (const { type, spec } of collections) {
      const fields = input(`${type}Where`).getFields()
      const filterable = [...spec.fields.values()].filter((field) => field.filterable)
      expect(Object.keys(fields), type).toEqual(filterable.map((field) => field.name))
      for (const field of filterable)
        expect(operatorFieldsOf(getNamedType(fields[field.name]?.type)?.name ?? ''), `${type}.${field.name}`).toEqual(operatorsOf(field))
    }
  })

  it('gives each filterable field of users the operator input of its type: the operators the parser takes on it, null where it may be missing', () => {
    const fields = input('UserWhere').getFields()
    const filterable = [...UsersCollection.fields.values()].filter((field) => field.filterable)
    expect(Object.keys(fields)).toEqual(filterable.map((field) => field.name))
    expect(Object.fromEntries(Object.values(fields).map((field) => [field.name, getNamedType(field.type).name]))).toEqual({
      id: 'IDFilter',
      name: 'StringFilter',
      email: 'StringFilter',
      age: 'NullableIntFilter',
      role: 'RoleFilter',
      username: 'NullableStringFilter',
      createdAt: 'DateTimeFilter',
      updatedAt: 'DateTimeFilter',
    })
    // Exactly the operators the parser takes on the field: GraphQL refuses the others by their types.
    for (const field of filterable) expect(operatorFieldsOf(getNamedType(fields[field.name]?.type)?.name ?? ''), field.name).toEqual(operatorsOf(field))
  })

  it('declares the operators of each type once, described: those the parser takes on a field of that type (ranges on integers, ids, text and instants)', () => {
    const types = { Int: 'integer', ID: 'integer', String: 'string', DateTime: 'timestamp', Boolean: 'boolean' } as const
    for (const [name, type] of Object.entries(types)) {
      for (const nullable of [false, true]) {
        const field: FieldSpec = { name: 'x', column: 'x', type, nullable, filterable: true, sortable: true, searchable: false }
        expect(operatorFieldsOf(`${nullable ? 'Nullable' : ''}${name}Filter`)).toEqual(operatorsOf(field))
      }
    }
    expect(operatorFieldsOf('IntFilter')).toEqual(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in'])
    expect(operatorFieldsOf('NullableBooleanFilter')).toEqual(['eq', 'ne', 'in', 'null'])
    expect(operatorFieldsOf('RoleFilter')).toEqual(['eq', 'ne', 'in'])
    expect(String(input('NullableIntFilter').getFields().gt?.description)).toMatch(/missing value never matches/)
    expect(String(input('NullableIntFilter').getFields().ne?.description)).toMatch(/missing value matches/)
    for (const name of ['IntFilter', 'NullableIntFilter', 'IDFilter', 'StringFilter', 'DateTimeFilter', 'BooleanFilter', 'RoleFilter', 'UserWhere']) {
      expect(input(name).description, name).toBeTruthy()
    }
  })
})
