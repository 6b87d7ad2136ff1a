// A real Apollo Client (v4: ApolloClient, InMemoryCache, HttpLink) against a live server: its
// relayStylePagination reads every page of a user's postsConnection with fetchMore while posts are
// added between pages, and its PersistedQueryLink speaks our automatic persisted queries (hash
// alone, PersistedQueryNotFound, the query sent with its hash; another client then needs the hash
// alone; hashed queries as GETs carry an ETag). What reached the server is read from a recording
// fetch handed to HttpLink: a spy on the client's own transport.
import { ApolloClient, ApolloLink, gql, HttpLink, InMemoryCache } from '@apollo/client'
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries'
import { relayStylePagination } from '@apollo/client/utilities'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { User } from '../../src/users/users.schemas.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { type Exchange, hashSent, querySent, recordingFetch, sha256 } from '../helpers/recording-fetch.js'
import { createFactories, type Factories } from '../helpers/factories.js'

const POSTS = gql`
  query UserPosts($id: ID!, $after: String) {
    user(id: $id) {
      id
      postsConnection(first: 10, after: $after) {
        edges {
          cursor
          node {
            id
            title
          }
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
  }
`

interface PostsData {
  user: {
    id: string
    postsConnection: { edges: { cursor: string; node: { id: string; title: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } }
  }
}

describe('a real Apollo Client', () => {
  let t: TestApp
  let make: Factories
  let uri: string
  let author: User
  beforeAll(async () => {
    t = await buildTestApp({ RATE_LIMIT_MAX: '100000', RATE_LIMIT_AUTHENTICATED_MAX: '100000' })
    uri = `${await t.app.listen({ host: '127.0.0.1', port: 0 })}/graphql`
    make = createFactories(t)
    author = await make.user()
  })
  afterAll(() => t?.close())

  it("reads every page of a user's posts with relayStylePagination, each once and in order, while posts are added", async () => {
    const existing: string[] = []
    for (let i = 0; i < 45; i++) existing.push(String((await make.post(author, { title: `Existing ${i}` })).id))
    const client = new ApolloClient({
      link: new HttpLink({ uri }),
      cache: new InMemoryCache({
        // The nested connection takes paging arguments only (it is in id order): no key arguments.
        typePolicies: { User: { fields: { postsConnection: relayStylePagination() } } },
      }),
    })
    const observable = client.watchQuery<PostsData>({ query: POSTS, variables: { id: String(author.id) } })
    const first = await new Promise<PostsData>((resolve, reject) => {
      const subscription = observable.subscribe({
        next: (result) => {
          if (result.dataState === 'complete') {
            subscription.unsubscribe()
            resolve(result.data)
          }
        },
        error: reject,
      })
    })
    let pageInfo = first.user.postsConnection.pageInfo
    const added: string[] = []
    let pages = 1
    while (pageInfo.hasNextPage) {
      // A post added between pages: its id is past every other, so a later page carries it.
      added.push(String((await make.post(author, { title: `Added ${pages}` })).id))
      const next = await observable.fetchMore<PostsData>({ variables: { after: pageInfo.endCursor } })
      pageInfo = next.data.user.postsConnection.pageInfo
      pages++
    }
    const cached = client.readQuery<PostsData>({ query: POSTS, variables: { id: String(author.id) } })
    const ids = cached?.user.postsConnection.edges.map((edge) => edge.node.id)
    // The connection is in id order: what existed comes first, in order, each once; the posts added
    // while paging come after it, each once, as every one was added before the page that holds it was read.
    expect(ids).toEqual([...existing, ...added])
    expect(pages).toBeGreaterThanOrEqual(5)
    expect(added.length).toBe(pages - 1)
  })

  it('speaks automatic persisted queries with PersistedQueryLink: the hash alone, the query on a miss, then the hash alone', async () => {
    const query = gql`
      query AuthorName($id: ID!) {
        user(id: $id) {
          id
          name
        }
      }
    `
    const clientOver = (useGETForHashedQueries: boolean) => {
      const recorder = recordingFetch()
      const link = ApolloLink.from([new PersistedQueryLink({ sha256, useGETForHashedQueries }), new HttpLink({ uri, fetch: recorder.fetch })])
      return { client: new ApolloClient({ link, cache: new InMemoryCache() }), exchanges: recorder.exchanges }
    }
    const variables = { id: String(author.id) }

    const first = clientOver(false)
    expect((await first.client.query({ query, variables })).data).toEqual({ user: { __typename: 'User', id: String(author.id), name: author.name } })
    const [miss, register] = first.exchanges as [Exchange, Exchange]
    expect(first.exchanges).toHaveLength(2)
    expect(querySent(miss)).toBeUndefined()
    const hash = hashSent(miss)
    expect(hash).toMatch(/^[0-9a-f]{64}$/)
    expect(querySent(register)).toBeDefined()
    expect(hashSent(register)).toBe(hash)
    expect(sha256(querySent(register) as string)).toBe(hash)

    // A second client with a fresh cache: the server knows the hash, which is all that is sent.
    const second = clientOver(false)
    expect((await second.client.query({ query, variables })).data).toMatchObject({ user: { name: author.name } })
    expect(second.exchanges.map((e) => ({ method: e.method, query: querySent(e), hash: hashSent(e) }))).toEqual([{ method: 'POST', query: undefined, hash }])

    // Over GET: the answer carries an ETag, and If-None-Match on it is answered 304.
    const third = clientOver(true)
    expect((await third.client.query({ query, variables })).data).toMatchObject({ user: { name: author.name } })
    expect(third.exchanges).toHaveLength(1)
    const get = third.exchanges[0] as Exchange
    expect({ method: get.method, query: querySent(get), hash: hashSent(get), status: get.status }).toEqual({
      method: 'GET',
      query: undefined,
      hash,
      status: 200,
    })
    expect(get.etag).not.toBeNull()
    // Apollo's fetch does not send If-None-Match itself (a browser's HTTP cache would): sent here by hand.
    expect(get.ifNoneMatch).toBeNull()
    const repeat = await fetch(get.url, { headers: { 'If-None-Match': get.etag as string } })
    expect(repeat.status).toBe(304)
  })
})
