// Posts a GraphQL operation to the test app as a client would: JSON over POST /graphql.
import type { LightMyRequestResponse } from 'fastify'
import type { TestApp } from './build-test-app.js'

export interface GraphQLAnswer {
  status: number
  headers: LightMyRequestResponse['headers']
  body: {
    data?: Record<string, unknown> | null
    errors?: { message: string; path?: (string | number)[]; locations?: unknown[]; extensions?: Record<string, unknown> }[]
  }
}

export async function graphql(
  t: TestApp,
  query: string,
  options: { variables?: Record<string, unknown>; operationName?: string; token?: string; headers?: Record<string, string> } = {},
): Promise<GraphQLAnswer> {
  const response = await t.request({
    method: 'POST',
    url: '/graphql',
    token: options.token,
    headers: options.headers,
    json: { query, variables: options.variables, operationName: options.operationName },
  })
  return { status: response.statusCode, headers: response.headers, body: response.json() }
}

/** The error codes of an answer, in order. */
export const codesOf = (answer: GraphQLAnswer): unknown[] => (answer.body.errors ?? []).map((error) => error.extensions?.code)
