// The query limits as graphql's validate runs them, beside the specified rules, on a schema shaped
// like Threadline's: each limit at its bound and one past it, fragments, cycles, introspection,
// several operations, and hostile documents of about a megabyte.
// Runs once, on SQLite: graphql's validation of documents; nothing is executed.
import {
  Kind,
  OperationTypeNode,
  buildSchema,
  getIntrospectionQuery,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type FieldNode,
  type GraphQLError,
  type SelectionSetNode,
} from 'graphql'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { MAX_NESTING, MAX_TOKENS, parserLimitError } from '../../src/graphql/document-limits/parser-guard.js'
import { queryLimitRules, type QueryLimits } from '../../src/graphql/document-limits/query-limit-rules.js'

const DEFAULTS = loadConfig({}).graphql.limits
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../../src/collections/pagination.js'

const schema = buildSchema(`
  directive @tag(name: String) repeatable on QUERY | MUTATION | FIELD | FRAGMENT_SPREAD | INLINE_FRAGMENT | FRAGMENT_DEFINITION | VARIABLE_DEFINITION

  type User {
    id: ID!
    name: String!
    email: String!
    posts(limit: Int, page: Int): [Post!]!
    todos(limit: Int, page: Int): [Todo!]!
    comments(limit: Int, page: Int): [Comment!]!
  }
  type Post { id: ID! title: String! author: User! comments(limit: Int, page: Int): [Comment!]! }
  type Comment { id: ID! content: String! author: User! post: Post! }
  type Todo { id: ID! text: String! completed: Boolean! user: User! }
  type Query {
    user(id: ID!): User
    users(limit: Int, page: Int, cursor: String, sort: String): [User!]!
    usersPage(limit: Int, page: Int, cursor: String, sort: String): UserPage!
    post(id: ID!): Post
    viewer: User
  }
  type UserPage { items: [User!]! pageInfo: PageInfo! }
  type PageInfo { total: Int page: Int hasMore: Boolean! }
  type Mutation { addTodo(text: String!): Todo! }
`)

const LIST_SIZES = { defaultLimit: DEFAULT_PAGE_LIMIT, maxLimit: MAX_PAGE_LIMIT }

function check(document: string | DocumentNode, limits: Partial<QueryLimits> = {}): readonly GraphQLError[] {
  const ast = typeof document === 'string' ? parse(document) : document
  return validate(schema, ast, [...specifiedRules, ...queryLimitRules({ ...DEFAULTS, ...limits }, LIST_SIZES)])
}

/** Only our rules: for documents on which graphql's own rules recurse past the stack (NoFragmentCyclesRule, from about 4,000 chained fragments). */
function checkLimitsOnly(document: DocumentNode, limits: Partial<QueryLimits> = {}): readonly GraphQLError[] {
  return validate(schema, document, queryLimitRules({ ...DEFAULTS, ...limits }, LIST_SIZES))
}

const limitErrors = (errors: readonly GraphQLError[], limit: string) => errors.filter((error) => error.extensions['limit'] === limit)

/** Where `needle` first appears in a one-line document, as graphql reports locations. */
function at(document: string, needle: string) {
  const index = document.indexOf(needle)
  if (index < 0) throw new Error(`${needle} not in the document`)
  return [{ line: 1, column: index + 1 }]
}

/** `{ viewer { posts(limit: 1) { author { ... { id } } } } }`: `levels` fields, one inside the other (one page of one, to cost little). */
function nested(levels: number): string {
  const names = Array.from({ length: levels - 2 }, (_, i) => (i % 2 === 0 ? 'posts(limit: 1)' : 'author'))
  const leaf = names.at(-1) === 'author' ? 'id' : 'title'
  return `{ viewer { ${names.map((name) => `${name} { `).join('')}${leaf}${' }'.repeat(names.length)} } }`
}

describe('depth', () => {
  it('passes a query at the limit and refuses one a level deeper, pointing at the first field past it', () => {
    expect(check(nested(10))).toEqual([])
    const query = nested(11)
    const errors = check(query)
    expect(errors).toHaveLength(1)
    expect(errors[0]?.message).toBe('The query is 11 levels deep; the limit is 10')
    expect(errors[0]?.extensions).toEqual({ code: 'BAD_REQUEST', limit: 'depth', value: 11, max: 10 })
    expect(errors[0]?.locations).toEqual(at(query, 'title'))
  })

  it('checks every operation, a mutation included', () => {
    const mutation = `mutation { addTodo(text: "x") { user { ${'posts(limit: 1) { author { '.repeat(4)}id${' } }'.repeat(4)} } } }`
    expect(check(mutation).map((error) => error.message)).toEqual(['The mutation is 11 levels deep; the limit is 10'])
    const document = `query Shallow { viewer { id } } ${mutation.replace('mutation', 'mutation Add')} query Deep ${nested(12)}`
    expect(check(document).map((error) => error.message)).toEqual([
      'Operation "Add" is 11 levels deep; the limit is 10',
      'Operation "Deep" is 12 levels deep; the limit is 10',
    ])
  })

  it('follows fragment spreads and inline fragments, which add no depth themselves', () => {
    // viewer, posts author posts (A), author posts author posts (B, through ... on Post), then the leaf.
    const fragments = (leaf: string) =>
      `fragment A on User { posts(limit: 1) { author { posts(limit: 1) { ...B } } } } fragment B on Post { author { posts(limit: 1) { ... on Post { author { posts(limit: 1) { ${leaf} } } } } } }`
    expect(check(`query Q { viewer { ...A } } ${fragments('author { id }')}`)).toEqual([])
    const query = `query Q { viewer { ...A } } ${fragments('author { posts(limit: 1) { id } }')}`
    const errors = check(query)
    expect(errors.map((error) => error.message)).toEqual(['Operation "Q" is 11 levels deep; the limit is 10'])
    expect(errors[0]?.locations).toEqual(at(query, 'id }'))
  })

  it('terminates on fragment cycles, leaving graphql to report the cycle', () => {
    const query = '{ viewer { ...A } } fragment A on User { posts { author { ...B } } } fragment B on User { comments { author { ...A } } }'
    const errors = check(query, { maxDepth: 3 })
    expect(errors.map((error) => error.message)).toContain('Cannot spread fragment "A" within itself via "B".')
    expect(limitErrors(errors, 'depth').map((error) => error.message)).toEqual(['The query is 5 levels deep; the limit is 3'])
    expect(check('{ viewer { ...A } } fragment A on User { ...A }').map((error) => error.message)).toEqual(['Cannot spread fragment "A" within itself.'])
  })

  it('passes the introspection query GraphiQL sends, with every option, outside the query depth', () => {
    expect(check(getIntrospectionQuery())).toEqual([])
    expect(check(getIntrospectionQuery({ inputValueDeprecation: true, schemaDescription: true }))).toEqual([])
    const everything = { specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true, oneOf: true }
    expect(check(getIntrospectionQuery(everything), { maxDepth: 2 })).toEqual([])
  })

  it('bounds introspection at 20 levels of its own', () => {
    const ofTypes = (levels: number) => `{ __type(name: "User") { ${'ofType { '.repeat(levels - 2)}name${' }'.repeat(levels - 2)} } }`
    expect(check(ofTypes(20))).toEqual([])
    const query = ofTypes(21)
    const errors = check(query)
    expect(errors.map((error) => error.message)).toEqual(['Introspection in the query is 21 levels deep; the limit for introspection is 20'])
    expect(errors[0]?.extensions).toEqual({ code: 'BAD_REQUEST', limit: 'depth', value: 21, max: 20 })
    expect(errors[0]?.locations).toEqual(at(query, 'name }'))
  })

  it('refuses introspection nested forty levels deep', () => {
    const levels = Array.from({ length: 37 }, (_, i) => (i % 2 === 0 ? 'fields' : 'type'))
    const query = `{ __schema { types { ${levels.map((name) => `${name} { `).join('')}name${' }'.repeat(levels.length)} } } }`
    const [error] = limitErrors(check(query), 'depth')
    expect(error?.message).toBe('Introspection in the query is 40 levels deep; the limit for introspection is 20')
  })

  it('counts __typename as an ordinary field', () => {
    expect(limitErrors(check(nested(10).replace(' id ', ' __typename ')), 'depth')).toEqual([])
    expect(limitErrors(check(nested(11).replace('title', '__typename')), 'depth')).toHaveLength(1)
  })
})

describe('cost', () => {
  const defaultPages = '{ users { posts { comments { author { name } } } } }'
  const maxPages = '{ users(limit: 100) { posts(limit: 100) { comments(limit: 100) { id } } } }'

  it('passes nested lists at the default page size: 1 + 20 × (1 + 20 × (1 + 20 × 2)) = 16,421', () => {
    expect(check(defaultPages)).toEqual([])
    expect(check(defaultPages, { maxCost: 16_421 })).toEqual([])
    const errors = check(defaultPages, { maxCost: 16_420 })
    expect(errors.map((error) => error.message)).toEqual([
      'The query costs 16421 (each field 1, times the page size of each list it is in); the limit is 16420',
    ])
    expect(errors[0]?.extensions).toEqual({ code: 'BAD_REQUEST', limit: 'cost', value: 16_421, max: 16_420 })
    expect(errors[0]?.locations).toEqual([{ line: 1, column: 1 }])
  })

  it('refuses three nested lists at the largest page size (1,010,101)', () => {
    expect(check(maxPages).map((error) => error.extensions)).toEqual([{ code: 'BAD_REQUEST', limit: 'cost', value: 1_010_101, max: 100_000 }])
  })

  it('caps a literal limit at the largest page size, and counts a variable limit as the largest', () => {
    const variable = 'query Q($n: Int) { users(limit: $n) { posts(limit: $n) { comments(limit: $n) { id } } } }'
    expect(check(variable).map((error) => error.extensions['value'])).toEqual([1_010_101])
    expect(check(maxPages.replaceAll('100', '5000')).map((error) => error.extensions['value'])).toEqual([1_010_101])
    expect(check('{ users(limit: 3) { posts(limit: 0) { id } } }', { maxCost: 0 }).map((error) => error.extensions['value'])).toEqual([1 + 3 * 2])
  })

  it("gives a page's items the page size of the field around them, through fragments too", () => {
    const value = (document: string) => check(document, { maxCost: 0 }).map((error) => error.extensions['value'])
    // pageInfo { total } is 2 fields and a count of the collection (READ_ROWS.count).
    expect(value('{ usersPage { items { posts { comments { author { name } } } } pageInfo { total } } }')).toEqual([1 + (1 + 20 * 821) + 2 + 10_000])
    const items = 'items { posts(limit: 100) { comments(limit: 100) { id } } }'
    expect(value(`{ usersPage(limit: 100) { ${items} } }`)).toEqual([1 + 1 + 100 * 10_101])
    expect(value(`{ usersPage(limit: 100) { ...Page } } fragment Page on UserPage { ${items} }`)).toEqual([1 + 1 + 100 * 10_101])
  })

  it('multiplies fragments and inline fragments by the lists around them', () => {
    const query = '{ users(limit: 100) { ...P } } fragment P on User { posts(limit: 100) { ... on Post { comments(limit: 100) { id } } } }'
    expect(check(query).map((error) => error.extensions['value'])).toEqual([1_010_101])
  })

  it('checks every operation of the document, once each', () => {
    const document = `query Cheap { viewer { id } } query Costly ${maxPages} query AlsoCostly ${maxPages}`
    const errors = check(document)
    expect(errors.map((error) => error.message)).toEqual([
      'Operation "Costly" costs 1010101 (each field 1, times the page size of each list it is in); the limit is 100000',
      'Operation "AlsoCostly" costs 1010101 (each field 1, times the page size of each list it is in); the limit is 100000',
    ])
    expect(errors[0]?.locations).toEqual(at(document, 'query Costly'))
  })

  it('terminates on fragment cycles', () => {
    const query = '{ users { ...A } } fragment A on User { posts { author { ...B } } } fragment B on User { comments { author { ...A } } }'
    expect(check(query).map((error) => error.message)).toEqual(['Cannot spread fragment "A" within itself via "B".'])
  })

  it('bounds introspection on its own, so the introspection query passes while repeating it does not', () => {
    const introspection = '__schema { types { fields { args { type { name } } } } }'
    expect(check(`{ ${introspection} }`, { maxCost: 1 })).toEqual([])
    const [error] = limitErrors(check(`{ ${`${introspection} `.repeat(60)}}`), 'cost')
    expect(error?.message).toMatch(/^Introspection in the query costs \d+; the limit for introspection is \d+$/)
    expect(error?.extensions['value']).toBeGreaterThan(error?.extensions['max'] as number)
  })
})

describe('aliases', () => {
  const aliases = (count: number, field = 'id', prefix = 'a') => Array.from({ length: count }, (_, i) => `${prefix}${i}: ${field}`).join(' ')

  it('passes 15 aliased fields in one selection set and refuses 16, pointing at the field that holds them', () => {
    expect(check(`{ viewer { ${aliases(15)} name } }`)).toEqual([])
    const query = `{ users { id } viewer { ${aliases(16)} } }`
    const errors = check(query)
    expect(errors.map((error) => error.message)).toEqual(['The query has 16 aliased fields in one selection set; the limit is 15'])
    expect(errors[0]?.extensions).toEqual({ code: 'BAD_REQUEST', limit: 'aliases', value: 16, max: 15 })
    expect(errors[0]?.locations).toEqual(at(query, 'viewer'))
  })

  it('points at the operation for aliases at its top level', () => {
    const query = `query Top { ${aliases(16, 'viewer { id }')} }`
    expect(check(query).map((error) => [error.message, error.locations])).toEqual([
      ['Operation "Top" has 16 aliased fields in one selection set; the limit is 15', at(query, 'query Top')],
    ])
  })

  it('counts the aliases of fragments spread or inlined into a selection set, not those of other sets', () => {
    const fragments = `fragment F on User { ${aliases(5, 'name', 'f')} ...G } fragment G on User { ${aliases(5, 'email', 'g')} }`
    expect(check(`{ viewer { ${aliases(4)} ...F ... on User { i: id } } } ${fragments}`)).toEqual([])
    const query = `{ viewer { ${aliases(5)} ...F ... on User { i: id } } } ${fragments}`
    expect(check(query).map((error) => error.extensions['value'])).toEqual([16])
    expect(check(`{ ${aliases(15, 'viewer { id }', 'v')} viewer { ${aliases(15)} posts { ${aliases(15)} } } }`)).toEqual([])
  })

  it('terminates on fragment cycles', () => {
    const query = `{ viewer { ...A } } fragment A on User { ${aliases(8)} ...B } fragment B on User { ${aliases(8, 'name', 'b')} ...A }`
    const errors = check(query)
    expect(errors.map((error) => error.message)).toContain('Cannot spread fragment "A" within itself via "B".')
    expect(limitErrors(errors, 'aliases').map((error) => error.extensions['value'])).toEqual([16])
  })
})

describe('fields per selection set', () => {
  it('passes 100 fields in one selection set and refuses 101, counting those of fragments spread or inlined into it', () => {
    expect(check(`{ viewer { ${'id '.repeat(100)}} }`)).toEqual([])
    const query = `{ users { id } viewer { ${'id '.repeat(90)}...F ... on User { name } } } fragment F on User { ${'email '.repeat(10)}}`
    const errors = limitErrors(check(query), 'fields')
    expect(errors.map((error) => error.message)).toEqual(['The query has 101 fields in one selection set; the limit is 100'])
    expect(errors[0]?.extensions).toEqual({ code: 'BAD_REQUEST', limit: 'fields', value: 101, max: 100 })
    expect(errors[0]?.locations).toEqual(at(query, 'viewer'))
  })
})

describe('directives', () => {
  const tags = (count: number) => ' @tag'.repeat(count)

  it('passes five directives on a field and refuses six', () => {
    expect(check(`{ viewer${tags(5)} { id } }`)).toEqual([])
    const query = `{ viewer { id } user(id: "1")${tags(6)} { id } }`
    const errors = check(query)
    expect(errors.map((error) => error.message)).toEqual(['A field carries 6 directives; the limit is 5'])
    expect(errors[0]?.extensions).toEqual({ code: 'BAD_REQUEST', limit: 'directives', value: 6, max: 5 })
    expect(errors[0]?.locations).toEqual(at(query, 'user'))
  })

  it('checks fragment spreads, inline fragments, operations, fragments and variables', () => {
    const cases: Array<[string, string]> = [
      [`{ viewer { ...F${tags(6)} } } fragment F on User { id }`, 'fragment spread'],
      [`{ viewer { ...${tags(6)} { id } } }`, 'inline fragment'],
      [`query Q${tags(6)} { viewer { id } }`, 'operation'],
      [`{ viewer { ...F } } fragment F on User${tags(6)} { id }`, 'fragment'],
      [`query Q($id: ID!${tags(6)}) { user(id: $id) { id } }`, 'variable'],
    ]
    for (const [query, holder] of cases) {
      expect(check(query).map((error) => error.message)).toEqual([`A ${holder} carries 6 directives; the limit is 5`])
      expect(check(query.replace(tags(6), tags(5)))).toEqual([])
    }
  })

  it('reports once per operation', () => {
    const query = `query A { viewer${tags(6)} { id${tags(7)} } } query B { viewer${tags(8)} { id } }`
    expect(limitErrors(check(query), 'directives').map((error) => error.extensions['value'])).toEqual([6, 8])
  })
})

/** A field nested `levels` deep, built as an AST rather than parsed: graphql's parser overflows the stack near 2,000 levels. */
function nestedDocument(levels: number): DocumentNode {
  let selectionSet: SelectionSetNode | undefined
  for (let level = levels; level >= 1; level--) {
    const name = level === 1 ? 'viewer' : level === levels ? 'id' : level % 2 === 0 ? 'posts' : 'author'
    const field: FieldNode = { kind: Kind.FIELD, name: { kind: Kind.NAME, value: name }, selectionSet }
    selectionSet = { kind: Kind.SELECTION_SET, selections: [field] }
  }
  return { kind: Kind.DOCUMENT, definitions: [{ kind: Kind.OPERATION_DEFINITION, operation: OperationTypeNode.QUERY, selectionSet: selectionSet! }] }
}

describe('hostile documents of about a megabyte', () => {
  it('refuses 50,000 aliases', () => {
    const query = `{ viewer { ${Array.from({ length: 50_000 }, (_, i) => `aliased${i}: email`).join(' ')} } }`
    expect(query.length).toBeGreaterThan(900_000)
    const errors = check(query)
    expect(limitErrors(errors, 'aliases').map((error) => error.extensions['value'])).toEqual([50_000])
  })

  it('refuses 1,500 levels of nesting as parsed, and 5,000 built as an AST, without recursing', () => {
    expect(limitErrors(check(nested(1_500)), 'depth').map((error) => error.extensions['value'])).toEqual([1_500])
    const errors = check(nestedDocument(5_000))
    expect(errors.map((error) => error.extensions['limit'])).toEqual(['depth', 'cost'])
    expect(errors[0]?.extensions['value']).toBe(5_000)
    // Twenty to the power 2,499 is past any float: the cost is reported as the largest safe integer.
    expect(errors[1]?.extensions['value']).toBe(Number.MAX_SAFE_INTEGER)
  })

  it('refuses 10,000 directives on one field with one error of its own', () => {
    const errors = check(`{ viewer${' @tag(name: "x")'.repeat(10_000)} { id } }`)
    expect(limitErrors(errors, 'directives').map((error) => error.extensions['value'])).toEqual([10_000])
  })

  it('follows a chain of 30,000 fragments once each', () => {
    const fragments = Array.from({ length: 30_000 }, (_, i) => `fragment F${i} on User { posts { author { ...F${i + 1} } } }`)
    const document = parse(`{ viewer { ...F0 } } ${fragments.join(' ')} fragment F30000 on User { id }`)
    const errors = checkLimitsOnly(document)
    expect(errors.map((error) => [error.extensions['limit'], error.extensions['value']])).toEqual([
      ['depth', 60_002],
      ['cost', Number.MAX_SAFE_INTEGER],
    ])
  })

  it('measures fragments that each spread the next twice without walking every path', () => {
    // 2^40 paths through the fragments; each fragment is measured once.
    const fragments = Array.from({ length: 40 }, (_, i) => `fragment F${i} on User { ...F${i + 1} ...F${i + 1} a${i}: id b${i}: id }`)
    const aliases = limitErrors(check(`{ viewer { ...F0 } } ${fragments.join(' ')} fragment F40 on User { id }`), 'aliases')
    expect(aliases.map((error) => error.extensions['value'])).toEqual([2 ** 41 - 2])
  })
})

describe('tokens and nesting, counted before the parser builds anything', () => {
  /** graphql's own verdict on the same document: the parser's maxTokens. */
  const parserRefuses = (query: string, max: number) => {
    try {
      parse(query, { maxTokens: max })
      return false
    } catch (error) {
      return /more th.. \d+ tokens/.test((error as Error).message)
    }
  }

  it.each([
    ['exactly the limit', `{ ${'a '.repeat(MAX_TOKENS - 2)}}`, false],
    ['one token past it', `{ ${'a '.repeat(MAX_TOKENS - 1)}}`, true],
    ['short tokens, no spaces', `{${'a:b,'.repeat(1400)}}`, true],
    ['a megabyte of comment around three tokens', `{ a } # ${'x'.repeat(1_000_000)}`, false],
    ['a short document', '{ viewer { id } }', false],
    ['a long string literal', `{ user(id: "${'9'.repeat(50_000)}") { id } }`, false],
  ])('agrees with the parser on %s', (_what, query, refused) => {
    expect(parserLimitError(query, MAX_TOKENS) !== undefined).toBe(refused)
    expect(parserRefuses(query, MAX_TOKENS)).toBe(refused)
  })

  // The parser recurses per level and overflows the stack near 2,000: such documents never reach it.
  it.each([
    ['selections left open', `{${'a{'.repeat(1999)}`],
    ['selections closed', `{${'a{'.repeat(MAX_NESTING)}a${'}'.repeat(MAX_NESTING + 1)}`],
    ['a list value', `{ a(x: ${'['.repeat(MAX_NESTING + 1)}1${']'.repeat(MAX_NESTING + 1)}) }`],
    ['an object value', `{ a(x: ${'{b:'.repeat(MAX_NESTING)}1${'}'.repeat(MAX_NESTING)}) }`],
  ])('refuses brackets nested too deep: %s', (_what, query) => {
    expect(parserLimitError(query, MAX_TOKENS)?.message).toBe(`Syntax Error: Document nests brackets more than ${MAX_NESTING} deep. Parsing aborted.`)
  })

  it('passes nesting up to the bound, and short documents without counting', () => {
    expect(parserLimitError(`{${'a{'.repeat(MAX_NESTING - 1)}a${'}'.repeat(MAX_NESTING)}`, MAX_TOKENS)).toBeUndefined()
    expect(parserLimitError(`{${'['.repeat(MAX_NESTING - 1)}`, MAX_TOKENS)).toBeUndefined()
  })

  it('leaves a document that does not lex to the parser, which says where', () => {
    expect(parserLimitError(`{ a "${'x'.repeat(5000)}`, MAX_TOKENS)).toBeUndefined()
  })

  it('refuses past the limit with a syntax error naming it', () => {
    expect(parserLimitError(`{ ${'a '.repeat(MAX_TOKENS)}}`, MAX_TOKENS)?.message).toBe(
      `Syntax Error: Document contains more than ${MAX_TOKENS} tokens. Parsing aborted.`,
    )
  })
})
