import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
let document: any;
beforeAll(async () => {
  service = await startTestService();
  document = (await service.request('GET', '/openapi.json')).body;
});
afterAll(async () => {
  await service?.stop();
});

test('the OpenAPI document describes the three security schemes: apiKey query parameter, X-API-Key header, bearer', () => {
  expect(document.components.securitySchemes).toEqual({
    apiKeyQuery: expect.objectContaining({ type: 'apiKey', in: 'query', name: 'apiKey' }),
    apiKeyHeader: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
  });
});

test('the OpenAPI document describes every key endpoint, with its statuses', () => {
  const operations = {
    '/api-keys/current': ['get', 'delete'],
    '/api-keys/usage': ['get'],
    '/api-keys/rotate': ['post'],
    '/api-keys': ['get', 'post'],
    '/api-keys/{id}': ['patch', 'delete'],
  };
  for (const [path, methods] of Object.entries(operations)) {
    for (const method of methods) {
      const operation = document.paths[path]?.[method];
      expect(operation, `${method} ${path}`).toBeDefined();
      expect(operation.tags).toEqual(['API Keys']);
      expect(operation.security.length).toBeGreaterThan(0);
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['401', '403', '429']));
    }
  }
  expect(Object.keys(document.paths['/api-keys'].post.responses)).toContain('201');
  expect(document.paths['/api-keys'].post.responses['200']).toBeUndefined();
  const created = document.paths['/api-keys'].post.responses['201'].content['application/json'].schema;
  expect(Object.keys(created.properties)).toEqual(['success', 'api_key', 'key', 'message']);
  const body = document.paths['/api-keys'].post.requestBody.content['application/json'].schema;
  expect(Object.keys(body.properties)).toEqual(['label', 'scopes', 'expires_at']);
  expect(document.paths['/api-keys/current'].get.responses['404'].content['application/json'].schema.required).toEqual(['success', 'error']);
  expect(document.paths['/api-keys/{id}'].patch.parameters.map((parameter: { name: string }) => parameter.name)).toContain('id');
});
