// The typed client's side of automatic persisted queries (Apollo's protocol, as its
// PersistedQueryLink speaks it): a query goes out as its SHA-256 alone; PersistedQueryNotFound
// sends it again with the document, which registers it; PersistedQueryNotSupported (the service has
// them off) makes this client send documents in full from then on. The hash comes from WebCrypto,
// so the client keeps running in browsers as in Node 20 (no node:crypto).

export interface PersistedQueryOptions {
  /**
   * Send a query named by its hash as a GET (mutations and subscriptions never), so that HTTP
   * caches and the ETag cache (`etagCache`) can keep its answer. The registration, which carries
   * the document, is a POST. @default false
   */
  useGETForHashedQueries?: boolean
}

/** Hashes kept per client: enough for any application's documents, bounded for one that builds them. */
const MAX_HASHES = 1000

/** The protocol's codes as an answer's errors carry them (code in extensions, or Apollo's messages). */
export function persistedQueryError(body: unknown): 'NOT_FOUND' | 'NOT_SUPPORTED' | undefined {
  const errors = (body as { errors?: unknown } | null | undefined)?.errors
  if (!Array.isArray(errors)) return undefined
  for (const error of errors as { message?: unknown; extensions?: { code?: unknown } | null }[]) {
    const code = error?.extensions?.code
    if (code === 'PERSISTED_QUERY_NOT_FOUND' || error?.message === 'PersistedQueryNotFound') return 'NOT_FOUND'
    if (code === 'PERSISTED_QUERY_NOT_SUPPORTED' || error?.message === 'PersistedQueryNotSupported') return 'NOT_SUPPORTED'
  }
  return undefined
}

/** SHA-256 of each document, in lower-case hex, computed once per document string. */
export function createDocumentHasher(): (document: string) => Promise<string | undefined> {
  const hashes = new Map<string, Promise<string | undefined>>()
  return (document) => {
    let hash = hashes.get(document)
    if (hash === undefined) {
      hash = sha256Hex(document)
      if (hashes.size >= MAX_HASHES) hashes.delete(hashes.keys().next().value as string)
      hashes.set(document, hash)
    }
    return hash
  }
}

/** undefined where there is no WebCrypto (a browser page served over plain http): the document then goes in full. */
async function sha256Hex(text: string): Promise<string | undefined> {
  const subtle = globalThis.crypto?.subtle as SubtleCrypto | undefined
  if (subtle === undefined) return undefined
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(text))
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('')
}

/**
 * Whether a document may go as a GET: none of its operations is a mutation or a subscription.
 * Read from its words outside strings and comments, without a GraphQL parser (the client carries
 * none); a document naming something `mutation` goes as a POST, which is never wrong.
 */
export function isReadOnly(document: string): boolean {
  const words = document
    .replace(/"""[\s\S]*?"""/g, ' ')
    .replace(/"(?:[^"\\\n]|\\.)*"/g, ' ')
    .replace(/#[^\n\r]*/g, ' ')
  return !/\b(?:mutation|subscription)\b/.test(words)
}
