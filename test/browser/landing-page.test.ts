// The landing page in a real Chromium: the page at / shows the counts, its links lead to the docs and
// GraphiQL, the curl line copies, and a comment written through the REST API while the page is open
// appears in its live feed. Nothing leaves the origin, the CSP refuses nothing, the console stays
// clean. Screenshots are kept under test-results/ (landing-page.png, landing-page-narrow.png).
import { mkdirSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumOrSkip, LAUNCH_HOOK_MS, launchChromium } from '../helpers/browser.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

const SCREENSHOTS = 'test-results'

const hasChromium = chromiumOrSkip()

describe.skipIf(!hasChromium)('the landing page in a browser', () => {
  let t: TestApp
  let origin: string
  let browser: Awaited<ReturnType<typeof launchChromium>>
  let page: Page
  let postId: number
  /** Requests to another origin (aborted), console errors (CSP refusals among them) and page errors. */
  const foreign: string[] = []
  const consoleErrors: string[] = []

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true })
    t = await buildTestApp()
    const post = await t.request({
      method: 'POST',
      url: `/api/v1/users/${t.alice.id}/posts`,
      token: t.tokens.alice,
      json: { title: 'Notes from the landing page', content: 'Say hello below.' },
    })
    postId = post.json<{ data: { id: number } }>().data.id
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    browser = await launchChromium()
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
    await browser.context.route('**/*', async (route) => {
      const url = new URL(route.request().url())
      if (url.origin === origin) return route.continue()
      foreign.push(url.href)
      return route.abort('blockedbyclient')
    })
    page = await browser.context.newPage()
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text())
    })
    page.on('pageerror', (error) => consoleErrors.push(error.message))
    await page.goto(`${origin}/`)
  }, LAUNCH_HOOK_MS)

  afterAll(async () => {
    await browser?.close()
    await t?.close()
    expect(foreign, 'requests to another origin').toEqual([])
    expect(consoleErrors, 'console errors and CSP refusals').toEqual([])
  })

  it('shows the counts an anonymous caller can see, and the curl line with the real origin', async () => {
    expect(await page.locator('#count-users').textContent()).toBe('3')
    expect(await page.locator('#count-posts').textContent()).toBe('1')
    expect(await page.locator('#count-comments').textContent()).toBe('0')
    expect(await page.locator('#curl').textContent()).toBe(`curl ${origin}/api/v1/users?limit=2`)
  })

  it('copies the curl line to the clipboard', async () => {
    await page.locator('#copy-curl').click()
    await page.locator('#copy-curl', { hasText: 'Copied' }).waitFor({ timeout: 3000 })
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`curl ${origin}/api/v1/users?limit=2`)
  })

  it('shows a comment written through the REST API within seconds, as text, and counts it', async () => {
    await page.locator('#feed-status', { hasText: 'Live' }).waitFor({ timeout: 5000 })
    const content = 'Hello <b>there</b> & welcome'
    const res = await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts/${postId}/comments`, token: t.tokens.bob, json: { content } })
    expect(res.statusCode).toBe(201)
    const item = page.locator('#feed li').first()
    await item.waitFor({ timeout: 5000 })
    expect(await item.locator('.content').textContent()).toBe(content)
    expect(await item.locator('b').count()).toBe(0) // the markup stayed text
    expect(await item.locator('.meta strong').textContent()).toBe('Bob')
    expect(await item.locator('.meta em').textContent()).toBe('Notes from the landing page')
    expect(await page.locator('#count-comments').textContent()).toBe('1')
    expect(await page.locator('#feed-empty').count()).toBe(0)
    await page.screenshot({ path: `${SCREENSHOTS}/landing-page.png`, fullPage: true })
    await page.setViewportSize({ width: 380, height: 800 })
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(380)
    await page.screenshot({ path: `${SCREENSHOTS}/landing-page-narrow.png`, fullPage: true })
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  it('misses nothing across a dropped connection: EventSource resumes with Last-Event-ID', async () => {
    await page.locator('#feed-status', { hasText: 'Live' }).waitFor({ timeout: 5000 })
    const write = async (content: string) =>
      expect(
        (await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts/${postId}/comments`, token: t.tokens.bob, json: { content } })).statusCode,
      ).toBe(201)
    const shown = () => page.locator('#feed li .content').allTextContents()
    await write('before the drop')
    await page.locator('#feed li .content', { hasText: 'before the drop' }).waitFor({ timeout: 5000 })
    // The network drops: every connection to the server is cut, the event stream's among them.
    t.app.server.closeAllConnections()
    await page.locator('#feed-status', { hasText: 'Reconnecting' }).waitFor({ timeout: 5000 })
    await write('while away 1')
    await write('while away 2')
    // The browser reconnects by itself (after its retry delay), sending the last id it received.
    await page.locator('#feed-status', { hasText: 'Live' }).waitFor({ timeout: 10_000 })
    await page.locator('#feed li .content', { hasText: 'while away 2' }).waitFor({ timeout: 5000 })
    await write('after')
    await page.locator('#feed li .content', { hasText: 'after' }).first().waitFor({ timeout: 5000 })
    const feed = await shown()
    // Newest first; each once.
    expect(feed.slice(0, 4)).toEqual(['after', 'while away 2', 'while away 1', 'before the drop'])
    expect(new Set(feed).size).toBe(feed.length)
    // The cut stream's response, reported by the browser as it should be: the one error this test causes.
    const cut = consoleErrors.findIndex((error) => error.includes('ERR_INCOMPLETE_CHUNKED_ENCODING'))
    expect(cut).not.toBe(-1)
    consoleErrors.splice(cut, 1)
  })

  it('leads to the API reference and to GraphiQL', async () => {
    for (const [name, path] of [
      ['API reference', '/docs'],
      ['GraphiQL', '/graphiql'],
    ] as const) {
      await page.goto(`${origin}/`)
      await Promise.all([page.waitForURL(`${origin}${path}`, { waitUntil: 'commit' }), page.getByRole('link', { name, exact: true }).click()])
      expect(await page.title()).toMatch(/Threadline/)
    }
    await page.goto(`${origin}/`)
  })
})
