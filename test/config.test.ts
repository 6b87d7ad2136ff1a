import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig, parseDatabaseUrl } from '../src/config.js'

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      host: '127.0.0.1',
      port: 3000,
      database: { dialect: 'sqlite', path: 'data/threadline.db' },
      seedDemoData: true,
      logLevel: 'info',
      nodeOptions: [],
      logFormat: 'json',
      operations: { readyTimeoutMs: 1000, metrics: true, metricsToken: undefined, shutdownGraceMs: 10_000 },
      tokenTtlMs: 30 * 86_400_000,
      idempotencyTtlMs: 86_400_000,
      rateLimit: { max: 300, authenticatedMax: 1200, windowMs: 60_000, onStoreError: 'open' },
      passwords: {
        signInMaxPerAddress: 20,
        signInMaxPerAccountAndAddress: 10,
        signInMaxPerAccount: 100,
        signInWindowMs: 900_000,
        changesMax: 5,
        changesWindowMs: 900_000,
        scryptN: 16_384,
      },
      cacheMaxAgeS: 0,
      openapi: true,
      docs: true,
      corsOrigins: [],
      trustProxy: false,
      graphql: {
        graphiql: true,
        introspection: true,
        jit: true,
        maxBatch: 10,
        subscriptions: {
          initTimeoutMs: 3000,
          keepAliveMs: 12_000,
          maxMessageBytes: 65_536,
          maxPerConnection: 20,
          maxConnectionsPerCaller: 20,
          maxConnections: 10_000,
          maxPendingEvents: 100,
          maxBufferedBytes: 4_194_304,
          maxCost: 1000,
          callerCost: 5000,
          deliveryCost: 100_000,
          deliveryWindowMs: 10_000,
          eventMaxDeliveryCost: 1_000_000,
        },
        persistedQueries: {
          enabled: true,
          cacheBytes: 8 * 2 ** 20,
          ttlMs: 7 * 86_400_000,
          maxDocumentBytes: 65_536,
          callerBytes: 2 ** 20,
          callerWindowMs: 3_600_000,
          redisBytes: 32 * 2 ** 20,
          trustedDocuments: new Map(),
          trustedOnly: false,
        },
        limits: { maxDepth: 10, maxCost: 100_000, maxAliases: 15, maxFieldsPerSelection: 100, maxDirectives: 5 },
      },
      redis: { url: undefined, keyPrefix: 'threadline:' },
      http: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 12_000,
        keepAliveTimeoutMs: 72_000,
        maxHeaderBytes: 16_384,
        maxConnections: 20_000,
        maxInFlight: 16,
        maxInFlightSlow: 16,
        maxQueuedPerCaller: 64,
        sendTimeoutMs: 10_000,
        shedLoopDelayMs: 100,
        retiredVariables: [],
        representationCacheMb: 16,
        exportMaxRows: 10_000,
      },
    })
  })

  it('reads the GraphQL settings, and refuses bad ones naming the variable', () => {
    const config = loadConfig({
      GRAPHIQL: 'false',
      GRAPHQL_INTROSPECTION: '0',
      GRAPHQL_JIT: 'false',
      GRAPHQL_MAX_BATCH: '0',
      GRAPHQL_MAX_DEPTH: '4',
      GRAPHQL_MAX_COST: '1000',
      GRAPHQL_MAX_ALIASES: '2',
      GRAPHQL_MAX_DIRECTIVES: '1',
    })
    expect(config.graphql).toMatchObject({
      graphiql: false,
      introspection: false,
      jit: false,
      maxBatch: 0,
      limits: { maxDepth: 4, maxCost: 1000, maxAliases: 2, maxDirectives: 1 },
    })
    expect(() => loadConfig({ GRAPHQL_MAX_DEPTH: '0' })).toThrow(/GRAPHQL_MAX_DEPTH/)
    expect(() => loadConfig({ GRAPHQL_MAX_BATCH: '1000' })).toThrow(/GRAPHQL_MAX_BATCH/)
    expect(() => loadConfig({ GRAPHIQL: 'maybe' })).toThrow(/GRAPHIQL/)
  })

  it('reads an OpenID Connect issuer, its audience and admin claim, and refuses what cannot be one', () => {
    expect(loadConfig({}).oidc).toBeUndefined()
    expect(
      loadConfig({
        OIDC_ISSUER: 'https://keycloak.example.com/realms/acme',
        OIDC_AUDIENCE: 'threadline-api',
        OIDC_ADMIN_CLAIM: 'realm_access.roles=threadline-admin',
      }).oidc,
    ).toEqual({
      issuer: 'https://keycloak.example.com/realms/acme',
      audience: 'threadline-api',
      adminClaim: { path: ['realm_access', 'roles'], value: 'threadline-admin' },
      jwksOrigins: ['https://keycloak.example.com'],
      keysCooldownMs: 5000,
    })
    expect(loadConfig({ OIDC_ISSUER: 'http://localhost:8080/realms/dev', OIDC_AUDIENCE: 'api', OIDC_ADMIN_CLAIM: 'is_admin' }).oidc?.adminClaim).toEqual({
      path: ['is_admin'],
      value: undefined,
    })
    expect(() => loadConfig({ OIDC_ISSUER: 'https://idp.example.com' })).toThrow(/OIDC_AUDIENCE: is required with OIDC_ISSUER/)
    expect(() => loadConfig({ OIDC_ISSUER: 'http://idp.example.com', OIDC_AUDIENCE: 'api' })).toThrow(/OIDC_ISSUER: expected the issuer's https:\/\/ URL/)
    expect(() => loadConfig({ OIDC_ISSUER: 'https://idp.example.com/?x=1', OIDC_AUDIENCE: 'api' })).toThrow(/OIDC_ISSUER/)
    expect(() => loadConfig({ OIDC_ISSUER: 'not a url', OIDC_AUDIENCE: 'api' })).toThrow(/OIDC_ISSUER/)
    expect(() => loadConfig({ OIDC_AUDIENCE: 'api' })).toThrow(/OIDC_AUDIENCE: is read only with OIDC_ISSUER/)
    expect(() => loadConfig({ OIDC_ISSUER: 'https://idp.example.com', OIDC_AUDIENCE: 'api', OIDC_ADMIN_CLAIM: 'roles..admin=x' })).toThrow(/OIDC_ADMIN_CLAIM/)
  })

  it("fetches an issuer's keys from its own origin alone unless OIDC_JWKS_ORIGINS names others, https under an https issuer", () => {
    const oidc = (env: Record<string, string>) => loadConfig({ OIDC_AUDIENCE: 'api', ...env }).oidc
    expect(oidc({ OIDC_ISSUER: 'https://idp.example.com/realms/acme' })?.jwksOrigins).toEqual(['https://idp.example.com'])
    expect(
      oidc({ OIDC_ISSUER: 'https://idp.example.com', OIDC_JWKS_ORIGINS: ' https://Keys.Example.com:443/ , https://jwks.example.net:8443' })?.jwksOrigins,
    ).toEqual(['https://idp.example.com', 'https://keys.example.com', 'https://jwks.example.net:8443'])
    expect(oidc({ OIDC_ISSUER: 'http://localhost:8080/realms/dev', OIDC_JWKS_ORIGINS: 'http://127.0.0.1:9000' })?.jwksOrigins).toEqual([
      'http://localhost:8080',
      'http://127.0.0.1:9000',
    ])
    for (const refused of [
      'http://keys.example.com',
      'http://localhost:9000',
      'https://keys.example.com/jwks',
      'https://user@keys.example.com',
      'keys.example.com',
      'ftp://keys.example.com',
    ]) {
      expect(() => oidc({ OIDC_ISSUER: 'https://idp.example.com', OIDC_JWKS_ORIGINS: refused })).toThrow(
        /^Invalid environment variable OIDC_JWKS_ORIGINS: expected origins/,
      )
    }
    expect(() => oidc({ OIDC_ISSUER: 'http://localhost:8080', OIDC_JWKS_ORIGINS: 'http://keys.example.com' })).toThrow(/OIDC_JWKS_ORIGINS/)
    expect(() => loadConfig({ OIDC_JWKS_ORIGINS: 'https://keys.example.com' })).toThrow(/OIDC_JWKS_ORIGINS: is read only with OIDC_ISSUER/)
  })

  it("reads the bounds of persisted queries, a caller's bytes holding at least one document of the largest size", () => {
    const persisted = loadConfig({
      GRAPHQL_PERSISTED_QUERY_MAX_BYTES: '10000',
      GRAPHQL_PERSISTED_QUERIES_CALLER_BYTES: '10000',
      GRAPHQL_PERSISTED_QUERIES_CALLER_WINDOW_S: '60',
      GRAPHQL_PERSISTED_QUERIES_REDIS_MB: '2',
    }).graphql.persistedQueries
    expect(persisted).toMatchObject({ maxDocumentBytes: 10_000, callerBytes: 10_000, callerWindowMs: 60_000, redisBytes: 2 * 2 ** 20 })
    expect(() => loadConfig({ GRAPHQL_PERSISTED_QUERY_MAX_BYTES: '20000', GRAPHQL_PERSISTED_QUERIES_CALLER_BYTES: '10000' })).toThrow(
      /GRAPHQL_PERSISTED_QUERIES_CALLER_BYTES: expected an integer from 20000/,
    )
    expect(() => loadConfig({ GRAPHQL_PERSISTED_QUERY_MAX_BYTES: '2000000' })).toThrow(/GRAPHQL_PERSISTED_QUERY_MAX_BYTES/)
    expect(() => loadConfig({ GRAPHQL_PERSISTED_QUERIES_REDIS_MB: '0' })).toThrow(/GRAPHQL_PERSISTED_QUERIES_REDIS_MB/)
  })

  it('reads the operations settings, and refuses bad ones naming the variable', () => {
    const token = 'a'.repeat(24)
    const config = loadConfig({ LOG_FORMAT: 'pretty', READY_TIMEOUT_MS: '250', METRICS: 'false', METRICS_TOKEN: token, SHUTDOWN_GRACE_MS: '100' })
    expect(config.logFormat).toBe('pretty')
    expect(config.operations).toEqual({ readyTimeoutMs: 250, metrics: false, metricsToken: token, shutdownGraceMs: 100 })
    expect(() => loadConfig({ METRICS_TOKEN: 'a'.repeat(23) })).toThrow(/METRICS_TOKEN: expected at least 24 characters/)
    expect(() => loadConfig({ METRICS_TOKEN: 'secret-but-short' })).not.toThrow(/secret-but-short/)
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT/)
    expect(() => loadConfig({ READY_TIMEOUT_MS: '0' })).toThrow(/READY_TIMEOUT_MS/)
    expect(() => loadConfig({ SHUTDOWN_GRACE_MS: '0' })).toThrow(/SHUTDOWN_GRACE_MS/)
  })

  it('keeps the subscription connections of an instance below its HTTP connections', () => {
    const subscriptionsOf = (env: Record<string, string>) => loadConfig(env).graphql.subscriptions.maxConnections
    expect(subscriptionsOf({})).toBe(10_000)
    expect(subscriptionsOf({ HTTP_MAX_CONNECTIONS: '300' })).toBe(150)
    expect(subscriptionsOf({ HTTP_MAX_CONNECTIONS: '0' })).toBe(10_000)
    expect(subscriptionsOf({ HTTP_MAX_CONNECTIONS: '300', GRAPHQL_MAX_CONNECTIONS: '299' })).toBe(299)
    expect(() => loadConfig({ HTTP_MAX_CONNECTIONS: '300', GRAPHQL_MAX_CONNECTIONS: '300' })).toThrow(
      /GRAPHQL_MAX_CONNECTIONS: expected less than HTTP_MAX_CONNECTIONS \(300\), got 300/,
    )
  })

  it('reads the password allowances, the account-wide bound above the one per account and address', () => {
    const config = loadConfig({
      SIGN_IN_MAX_PER_ADDRESS: '30',
      SIGN_IN_MAX_PER_ACCOUNT_AND_ADDRESS: '5',
      SIGN_IN_MAX_PER_ACCOUNT: '50',
      SIGN_IN_WINDOW_S: '600',
      PASSWORD_CHANGES_MAX: '3',
      PASSWORD_CHANGES_WINDOW_S: '3600',
      PASSWORD_SCRYPT_N: '65536',
    })
    expect(config.passwords).toEqual({
      signInMaxPerAddress: 30,
      signInMaxPerAccountAndAddress: 5,
      signInMaxPerAccount: 50,
      signInWindowMs: 600_000,
      changesMax: 3,
      changesWindowMs: 3_600_000,
      scryptN: 65_536,
    })
    expect(loadConfig({}).passwords.scryptN).toBe(16_384)
    expect(() => loadConfig({ SIGN_IN_MAX_PER_ACCOUNT: '10' })).toThrow(
      /SIGN_IN_MAX_PER_ACCOUNT: expected more than SIGN_IN_MAX_PER_ACCOUNT_AND_ADDRESS \(10\)/,
    )
    expect(() => loadConfig({ SIGN_IN_MAX_PER_ADDRESS: '0' })).toThrow(/SIGN_IN_MAX_PER_ADDRESS/)
    expect(() => loadConfig({ PASSWORD_CHANGES_WINDOW_S: '1m' })).toThrow(/PASSWORD_CHANGES_WINDOW_S/)
    expect(() => loadConfig({ PASSWORD_SCRYPT_N: '3000' })).toThrow(/PASSWORD_SCRYPT_N: expected a power of two from 1024 to 1048576, got 3000/)
    expect(() => loadConfig({ PASSWORD_SCRYPT_N: '512' })).toThrow(/PASSWORD_SCRYPT_N/)
    expect(loadConfig({ NODE_OPTIONS: '  --max-old-space-size=512   --heap-growing-percent=50 ' }).nodeOptions).toEqual([
      '--max-old-space-size=512',
      '--heap-growing-percent=50',
    ])
  })

  it('reads the HTTP settings', () => {
    const config = loadConfig({
      RATE_LIMIT_MAX: '10',
      RATE_LIMIT_AUTHENTICATED_MAX: '50',
      RATE_LIMIT_WINDOW_S: '5',
      CACHE_MAX_AGE_S: '30',
      CORS_ORIGINS: 'https://app.example.com, http://localhost:5173',
      TRUST_PROXY: '10.0.0.0/8,127.0.0.1',
      DOCS: 'false',
    })
    expect(config).toMatchObject({
      docs: false,
      rateLimit: { max: 10, authenticatedMax: 50, windowMs: 5000 },
      cacheMaxAgeS: 30,
      corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
      trustProxy: ['10.0.0.0/8', '127.0.0.1'],
    })
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true)
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2)
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toEqual(['loopback', '10.0.0.0/8'])
    expect(() => loadConfig({ DOCS: 'maybe' })).toThrow(/DOCS/)
  })

  it('sizes the requests in their handlers from the PostgreSQL pool, and accepts the retired per-caller settings without using them', () => {
    expect(loadConfig({ HTTP_MAX_IN_FLIGHT: '4' }).http.maxInFlight).toBe(4)
    // Twice the pool: a request worked on in the process for each one waiting on PostgreSQL.
    expect(loadConfig({ DATABASE_URL: 'postgres://db.example.com/threadline', DATABASE_POOL_SIZE: '25' }).http.maxInFlight).toBe(50)
    expect(loadConfig({ DATABASE_URL: 'postgres://db.example.com/threadline' }).http).toMatchObject({ maxInFlight: 20, maxInFlightSlow: 10 })
    // Slow work holds at most one slot a connection of the pool, and never more than there are.
    expect(loadConfig({ DATABASE_URL: 'postgres://db.example.com/threadline', HTTP_MAX_IN_FLIGHT: '4' }).http).toMatchObject({
      maxInFlight: 4,
      maxInFlightSlow: 4,
    })
    expect(loadConfig({ HTTP_MAX_IN_FLIGHT: '4' }).http.maxInFlightSlow).toBe(4)
    const retired = loadConfig({ HTTP_MAX_IN_FLIGHT_PER_CALLER: '2', HTTP_MAX_BUSY_PERCENT_PER_CALLER: '50' }).http
    expect(retired).toMatchObject({ maxInFlight: 16, retiredVariables: ['HTTP_MAX_IN_FLIGHT_PER_CALLER', 'HTTP_MAX_BUSY_PERCENT_PER_CALLER'] })
    // Turned off before, still off.
    expect(loadConfig({ HTTP_MAX_IN_FLIGHT_PER_CALLER: '0' }).http.maxInFlight).toBe(0)
    expect(() => loadConfig({ HTTP_MAX_IN_FLIGHT: 'many' })).toThrow(/HTTP_MAX_IN_FLIGHT/)
  })

  it('reads every variable', () => {
    const config = loadConfig({
      HOST: '0.0.0.0',
      PORT: '8080',
      DATABASE_URL: 'sqlite:/var/lib/threadline/db.sqlite',
      SEED_DEMO_DATA: 'false',
      LOG_LEVEL: 'warn',
      TOKEN_TTL: '12h',
      IDEMPOTENCY_TTL_S: '3600',
    })
    expect(config).toMatchObject({
      host: '0.0.0.0',
      port: 8080,
      seedDemoData: false,
      logLevel: 'warn',
      tokenTtlMs: 12 * 3_600_000,
      idempotencyTtlMs: 3_600_000,
    })
    expect(config.database).toEqual({ dialect: 'sqlite', path: '/var/lib/threadline/db.sqlite' })
  })

  it('is frozen', () => {
    expect(Object.isFrozen(loadConfig({}))).toBe(true)
  })

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['SEED_DEMO_DATA', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['TOKEN_TTL', '30 days'],
    ['TOKEN_TTL', '0d'],
    ['IDEMPOTENCY_TTL_S', '59'],
    ['IDEMPOTENCY_TTL_S', '604801'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['DATABASE_URL', 'sqlite:'],
    ['DATABASE_URL', 'postgres://db.internal'],
    ['DATABASE_POOL_SIZE', '0'],
    ['DATABASE_QUERY_TIMEOUT_MS', '-1'],
    ['RATE_LIMIT_MAX', 'lots'],
    ['RATE_LIMIT_WINDOW_S', '0'],
    ['CACHE_MAX_AGE_S', '-5'],
    ['CORS_ORIGINS', 'app.example.com'],
    ['CORS_ORIGINS', 'https://app.example.com/path'],
    ['TRUST_PROXY', 'everyone'],
  ])('names the variable when %s=%s is wrong', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid environment variable ${name}: `))
  })

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', LOG_LEVEL: ' ' })).toMatchObject({ port: 3000, logLevel: 'info' })
  })
})

describe('parseDatabaseUrl', () => {
  it.each([
    ['sqlite:data/threadline.db', 'data/threadline.db'],
    ['sqlite:/tmp/a.db', '/tmp/a.db'],
    ['sqlite:///tmp/a.db', '/tmp/a.db'],
    ['sqlite::memory:', ':memory:'],
  ])('reads %s as the file %s', (url, path) => {
    expect(parseDatabaseUrl(url)).toEqual({ dialect: 'sqlite', path })
  })

  it('reads postgres:// and postgresql:// URLs whole, with the pool size', () => {
    const url = 'postgres://app:secret@db.internal:5433/threadline?sslmode=require'
    expect(parseDatabaseUrl(url, { poolSize: 25, queryTimeoutMs: 500 })).toEqual({ dialect: 'postgres', url, poolSize: 25, queryTimeoutMs: 500 })
    expect(parseDatabaseUrl('postgresql://db/threadline')).toEqual({
      dialect: 'postgres',
      url: 'postgresql://db/threadline',
      poolSize: 10,
      queryTimeoutMs: 10_000,
    })
    const database = loadConfig({ DATABASE_URL: 'postgres://db/threadline', DATABASE_POOL_SIZE: '4', DATABASE_QUERY_TIMEOUT_MS: '0' }).database
    expect(database).toMatchObject({ poolSize: 4, queryTimeoutMs: 0 })
  })

  it('refuses a postgres:// URL without a database, and never prints a password', () => {
    expect(parseDatabaseUrl('postgres://db.internal:5432')).toMatch(/names no database/)
    expect(parseDatabaseUrl('postgres://db.internal:5432/')).toMatch(/names no database/)
    expect(() => loadConfig({ DATABASE_URL: 'mysql://app:hunter2@db/threadline' })).toThrow(/mysql:\/\/app:\*\*\*@db/)
    expect(() => loadConfig({ DATABASE_URL: 'mysql://app:hunter2@db/threadline' })).not.toThrow(/hunter2/)
  })
})

describe('Redis settings', () => {
  it('keeps rate limits and events in the process without REDIS_URL', () => {
    expect(loadConfig({}).redis).toEqual({ url: undefined, keyPrefix: 'threadline:' })
    expect(loadConfig({ REDIS_URL: ' ' }).redis.url).toBeUndefined()
  })

  it('reads redis:// and rediss:// URLs whole, the key prefix and the store failure policy', () => {
    const config = loadConfig({
      REDIS_URL: 'rediss://app:secret@cache.internal:6380/2',
      REDIS_KEY_PREFIX: 'tl-staging:',
      RATE_LIMIT_ON_REDIS_ERROR: 'closed',
    })
    expect(config.redis).toEqual({ url: 'rediss://app:secret@cache.internal:6380/2', keyPrefix: 'tl-staging:' })
    expect(config.rateLimit.onStoreError).toBe('closed')
    expect(Object.isFrozen(config.redis)).toBe(true)
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).redis.url).toBe('redis://127.0.0.1:6379')
    expect(loadConfig({ RATE_LIMIT_ON_REDIS_ERROR: 'open' }).rateLimit.onStoreError).toBe('open')
  })

  it.each([
    ['REDIS_URL', 'http://cache.internal:6379'],
    ['REDIS_URL', '127.0.0.1:6379'],
    ['REDIS_URL', 'redis://'],
    ['REDIS_URL', 'not a url'],
    ['REDIS_KEY_PREFIX', 'has space:'],
    ['REDIS_KEY_PREFIX', 'glob*:'],
    ['REDIS_KEY_PREFIX', 'x'.repeat(101)],
    ['RATE_LIMIT_ON_REDIS_ERROR', 'ignore'],
  ])('names the variable when %s=%s is wrong', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid environment variable ${name}: `))
  })

  it('never repeats a REDIS_URL in its error: it may hold a password', () => {
    expect(() => loadConfig({ REDIS_URL: 'https://app:hunter2@cache.internal' })).toThrow(/got a https: URL/)
    expect(() => loadConfig({ REDIS_URL: 'https://app:hunter2@cache.internal' })).not.toThrow(/hunter2/)
  })
})
