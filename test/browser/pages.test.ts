// The pages a person opens, in a real Chromium: the API reference at /docs and GraphiQL at
// /graphiql, served by the app on a listening port. Every request the pages make must stay on the
// service's origin; one to anywhere else is aborted and fails the test, and so does anything the
// pages' Content-Security-Policy refuses. Screenshots of both pages are kept under test-results/browser/.
import { mkdirSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { chromiumOrSkip, LAUNCH_HOOK_MS, launchChromium } from '../helpers/browser.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { startTestIssuer, type TestIssuer } from '../helpers/oidc-issuer.js'

const SCREENSHOTS = 'test-results/browser'

const hasChromium = chromiumOrSkip()

describe.skipIf(!hasChromium)('the browser pages', () => {
  let t: TestApp
  let issuer: TestIssuer
  let origin: string
  let browser: Awaited<ReturnType<typeof launchChromium>>
  let context: BrowserContext
  let page: Page
  /** Requests the pages tried to make to another origin (all aborted). */
  let foreign: string[]
  /** What the pages' Content-Security-Policy refused (it would also stop a request elsewhere). */
  let refusedByCsp: string[]

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true })
    // An OpenID Connect issuer the service trusts: the server alone talks to it, never the pages.
    issuer = await startTestIssuer('threadline-api')
    t = await buildTestApp({ OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: 'threadline-api' })
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    browser = await launchChromium()
    context = browser.context
    await context.route('**/*', async (route) => {
      const url = new URL(route.request().url())
      if (url.origin === origin) return route.continue()
      foreign.push(url.href)
      return route.abort('blockedbyclient')
    })
  }, LAUNCH_HOOK_MS)

  afterAll(async () => {
    await browser?.close()
    await t?.close()
    await issuer?.close()
  })

  beforeEach(async () => {
    foreign = []
    refusedByCsp = []
    page = await context.newPage()
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) refusedByCsp.push(message.text())
    })
    // WebSockets bypass route(): checked as they open.
    page.on('websocket', (socket) => {
      const url = new URL(socket.url())
      if (url.host !== new URL(origin).host) foreign.push(url.href)
    })
  })

  afterEach(async () => {
    await page.close()
    expect(foreign, 'requests to another origin').toEqual([])
    expect(refusedByCsp, 'refused by the Content-Security-Policy').toEqual([])
  })

  it('shows the users endpoints at /docs, and "Try it out" on GET /api/v1/users answers 200 with the users, with the token given to Authorize', async () => {
    const sent: Array<{ url: string; authorization: string | undefined }> = []
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/api/v1/users') sent.push({ url: request.url(), authorization: request.headers().authorization })
    })
    await page.goto(`${origin}/docs`)
    const listUsers = page.locator('#operations-Users-listUsersV1')
    await listUsers.waitFor()
    expect(await page.locator('#operations-Users-createUserV1').count()).toBe(1)

    // Authorize with a token, as a user pasting one.
    await page.locator('.auth-wrapper .authorize').click()
    const dialog = page.locator('.dialog-ux .modal-ux')
    await dialog.locator('input[type=text], input[type=password]').first().fill(t.tokens.alice)
    await dialog.locator('button.authorize').click()
    await dialog.locator('button.btn-done').click()

    await listUsers.locator('.opblock-summary').first().click()
    await listUsers.locator('.try-out__btn').click()
    await listUsers.locator('.execute').click()
    const response = listUsers.locator('.live-responses-table .response')
    await response.locator('.response-col_status', { hasText: '200' }).waitFor()
    await expect(response.locator('.response-col_description').textContent()).resolves.toContain('Alice')

    expect(sent).toHaveLength(1)
    expect(new URL(sent[0]?.url ?? '').origin).toBe(origin)
    expect(sent[0]?.authorization).toBe(`Bearer ${t.tokens.alice}`)
    await page.screenshot({ path: `${SCREENSHOTS}/docs.png`, fullPage: false })
    // Swagger UI renders the whole document (650 KB since every operator of every field is a
    // parameter): 9-14 s to an answered "Try it out" on this 2-core host while the suite runs.
  }, 60_000)

  it('runs a query at /graphiql with the Authorization header typed in its Headers editor', async () => {
    const graphqlAuthorizations: Array<string | undefined> = []
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/graphql' && request.method() === 'POST') graphqlAuthorizations.push(request.headers().authorization)
    })
    await openGraphiql(page, origin)
    await setEditor(page, 'headers', JSON.stringify({ Authorization: `Bearer ${t.tokens.alice}` }))
    await setEditor(page, 'query', '{ users { id name } viewer { name } }')
    await run(page)
    await expect.poll(() => responseText(page)).toContain('"viewer": {')
    const result = JSON.parse(await responseText(page)) as { data: { users: Array<{ name: string }>; viewer: { name: string } } }
    expect(result.data.users.map((user) => user.name)).toEqual(['Ada Admin', 'Alice', 'Bob'])
    expect(result.data.viewer).toEqual({ name: 'Alice' })
    expect(graphqlAuthorizations.at(-1)).toBe(`Bearer ${t.tokens.alice}`)
  })

  it('runs a query at /graphiql with an access token of the OpenID Connect issuer in its Headers editor', async () => {
    const token = await issuer.sign({ sub: 'grace', name: 'Grace Hopper', email: 'grace@idp.example' })
    await openGraphiql(page, origin)
    await setEditor(page, 'headers', JSON.stringify({ Authorization: `Bearer ${token}` }))
    await setEditor(page, 'query', '{ viewer { name email } }')
    await run(page)
    await expect.poll(() => responseText(page)).toContain('"viewer": {')
    expect(JSON.parse(await responseText(page))).toEqual({ data: { viewer: { name: 'Grace Hopper', email: 'grace@idp.example' } } })
  })

  it('shows at /graphiql a commentAdded event for a comment made over REST, subscribed over WebSocket with the header as connectionParams', async () => {
    const post = await t.request({
      method: 'POST',
      url: `/api/v1/users/${t.bob.id}/posts`,
      token: t.tokens.bob,
      json: { title: 'Watched', content: 'Comment here.' },
    })
    expect(post.statusCode).toBe(201)
    const postId = String(post.json().data.id)

    const initPayloads: unknown[] = []
    page.on('websocket', (socket) => {
      socket.on('framesent', ({ payload }) => {
        const message = JSON.parse(String(payload)) as { type: string; payload?: unknown }
        if (message.type === 'connection_init') initPayloads.push(message.payload)
      })
    })
    await openGraphiql(page, origin)
    await setEditor(page, 'headers', JSON.stringify({ Authorization: `Bearer ${t.tokens.alice}` }))
    await setEditor(page, 'query', `subscription Watch { commentAdded(postId: "${postId}") { content author { name } } }`)
    await run(page)
    await expect.poll(() => t.app.subscriptionStats.subscriptions, { timeout: 10_000 }).toBe(1)

    const comment = await t.request({
      method: 'POST',
      url: `/api/v1/users/${t.bob.id}/posts/${postId}/comments`,
      token: t.tokens.alice,
      json: { content: 'Seen from the browser' },
    })
    expect(comment.statusCode).toBe(201)
    await expect.poll(() => responseText(page), { timeout: 10_000 }).toContain('Seen from the browser')
    expect(JSON.parse(await responseText(page))).toEqual({ data: { commentAdded: { content: 'Seen from the browser', author: { name: 'Alice' } } } })
    expect(initPayloads).toEqual([expect.objectContaining({ Authorization: `Bearer ${t.tokens.alice}` })])
    await page.screenshot({ path: `${SCREENSHOTS}/graphiql.png`, fullPage: false })
  })
})

const QUERY_EDITOR = '.graphiql-query-editor .CodeMirror'
const HEADERS_EDITOR = '.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror'

async function openGraphiql(page: Page, origin: string): Promise<void> {
  await page.goto(`${origin}/graphiql`)
  await page.locator(QUERY_EDITOR).waitFor()
  // The tools open on Headers (defaultEditorToolsVisibility); the Variables editor is there, hidden.
  await page.locator('.graphiql-editor-tools button', { hasText: 'Headers' }).click()
  await page.locator(HEADERS_EDITOR).waitFor()
}

type CodeMirrorElement = HTMLElement & { CodeMirror: { setValue(value: string): void; documentAST?: { loc?: { source: { body: string } } } | null } }

/**
 * Replaces the text of GraphiQL's query or headers editor (CodeMirror 5, its instance on the
 * element). For the query, waits for GraphiQL to parse it (debounced by 100 ms): the fetcher tells
 * a subscription, to send over WebSocket, by that parsed document.
 */
async function setEditor(page: Page, editor: 'query' | 'headers', text: string): Promise<void> {
  const cm = page.locator(editor === 'query' ? QUERY_EDITOR : HEADERS_EDITOR)
  await cm.evaluate((element, value) => (element as CodeMirrorElement).CodeMirror.setValue(value), text)
  if (editor === 'query') {
    const handle = await cm.elementHandle()
    await page.waitForFunction(([element, value]) => (element as CodeMirrorElement).CodeMirror.documentAST?.loc?.source.body === value, [handle, text] as const)
  }
}

async function run(page: Page): Promise<void> {
  await page.locator('.graphiql-execute-button').click()
}

async function responseText(page: Page): Promise<string> {
  return page
    .locator('.graphiql-response .CodeMirror')
    .first()
    .evaluate((element) => (element as HTMLElement & { CodeMirror: { getValue(): string } }).CodeMirror.getValue())
}
