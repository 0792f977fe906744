import { describe, expect, it } from 'vitest';
import { buildCatalog, loadCatalog, privateRouteHosts, routeName } from '../../src/catalog/index.js';
import { ConfigError } from '../../src/config.js';

const at = 'catalog overrides: models."seedance-2.0".routes';
const routes = (list: unknown) => ({ models: { 'seedance-2.0': { routes: list } } });

/** Routes of the operator's catalog file (issue 8): kinds, credentials by setting name, precise refusals. */
describe('catalog routes', () => {
  it('keeps the local backend as the default route of every model', () => {
    for (const m of buildCatalog().models) {
      // A kie.ai market model (catalog/kie/) goes to kie.ai first when KIE_API_KEY is set (decision 3311).
      const market = m.source?.includes('/catalog/kie/') ? [{ backend: 'kie', model: m.id, keyEnv: 'KIE_API_KEY', asIs: true, optional: true }] : [];
      expect(m.routes, m.id).toEqual([...market, { backend: 'local' }]);
    }
  });

  it('an optional route is left out while its setting is not set, and kept once it is (decision 3311)', () => {
    const model = 'wan/2-6-text-to-video';
    expect(loadCatalog({}).find(model)!.routes).toEqual([{ backend: 'local' }]);
    expect(loadCatalog({ secrets: { OTHER_KEY: 'x' } }).find(model)!.routes).toEqual([{ backend: 'local' }]);
    expect(loadCatalog({ secrets: { KIE_API_KEY: 'k' } }).find(model)!.routes).toEqual([
      { backend: 'kie', model, keyEnv: 'KIE_API_KEY', asIs: true, optional: true },
      { backend: 'local' },
    ]);
    // Routes the operator gives in the catalog file are never optional unless said so.
    const c = buildCatalog({ models: { [model]: { routes: [{ backend: 'kie', key_env: 'MY_KIE_KEY', optional: true }, { backend: 'local' }] } } });
    expect(c.find(model)!.routes[0]).toEqual({ backend: 'kie', keyEnv: 'MY_KIE_KEY', optional: true });
    expect(() => buildCatalog(routes([{ backend: 'same-api', base_url: 'https://u.example.com', key_env: 'U_KEY', optional: true }]))).toThrow(
      new ConfigError(`${at}[0].optional: is for kie, fal, replicate routes`),
    );
    expect(() => buildCatalog(routes([{ backend: 'kie', key_env: 'KIE_API_KEY', optional: 'yes' }]))).toThrow(
      new ConfigError(`${at}[0].optional: must be true (leave the route out while KIE_API_KEY is not set) or false (got "yes")`),
    );
  });

  it('reads upstream routes in order with their fields', () => {
    const c = buildCatalog(
      routes([
        {
          backend: 'fal',
          model: 'fal-ai/seedance',
          key_env: 'FAL_KEY',
          concurrency: 3,
          map: { rename: { duration: 'seconds' }, set: { sync: true }, omit: ['seed'] },
        },
        { backend: 'same-api', base_url: 'https://up.example.com/', key_env: 'UPSTREAM_KEY', name: 'backup' },
        { backend: 'local' },
      ]),
    );
    const m = c.find('seedance-2.0')!;
    expect(m.routes).toEqual([
      {
        backend: 'fal',
        model: 'fal-ai/seedance',
        keyEnv: 'FAL_KEY',
        concurrency: 3,
        map: { rename: { duration: 'seconds' }, set: { sync: true }, omit: ['seed'] },
      },
      { backend: 'same-api', baseUrl: 'https://up.example.com', keyEnv: 'UPSTREAM_KEY', name: 'backup' },
      { backend: 'local' },
    ]);
    expect(m.routes.map((r, i) => routeName(m.id, r, i))).toEqual(['fal:seedance-2.0#1', 'backup', 'local']);
  });

  it("reads as_is on fal, replicate and kie routes (the input under the model's own names, decision 3303)", () => {
    const c = buildCatalog(
      routes([
        { backend: 'fal', model: 'fal-ai/x', key_env: 'FAL_KEY', as_is: true },
        { backend: 'replicate', model: 'o/n', key_env: 'REPLICATE_API_TOKEN', as_is: false },
        { backend: 'kie', model: 'x/y', key_env: 'KIE_API_KEY', as_is: true },
      ]),
    );
    expect(c.find('seedance-2.0')!.routes.map((r) => r.asIs)).toEqual([true, undefined, true]);
  });

  it('reads private_network on upstream and comfyui routes and lists their hosts (decision 2502)', () => {
    const c = buildCatalog(
      routes([
        { backend: 'same-api', base_url: 'http://10.0.0.5:8080', key_env: 'UP_KEY', private_network: true },
        { backend: 'kie', key_env: 'KIE_API_KEY', base_url: 'https://api.kie.ai', upload_url: 'http://uploads.lan', private_network: true },
        { backend: 'fal', model: 'fal-ai/x', key_env: 'FAL_KEY', private_network: false },
      ]),
    );
    expect(c.find('seedance-2.0')!.routes.map((r) => r.privateNetwork)).toEqual([true, true, undefined]);
    expect(privateRouteHosts(c).sort()).toEqual(['10.0.0.5', 'api.kie.ai', 'uploads.lan']);
    expect(() => buildCatalog(routes([{ backend: 'fal', model: 'm', key_env: 'FAL_KEY', private_network: 'yes' }]))).toThrow(
      `${at}[0].private_network: must be true (this route's own hosts may be on loopback or private addresses; customers' links stay guarded) or false (got "yes")`,
    );
  });

  it.each([
    [[], `${at}: must be a non-empty list like`],
    [[{ backend: 'local', model: 'x' }], `${at}[0].model: unknown field; a local route has only "backend"`],
    [[{ backend: 'fal', key_env: 'FAL_KEY' }], `${at}[0].model: is required for a fal route: the fal model id`],
    [
      [{ backend: 'fal', model: 'm', key_env: 'FAL_KEY', api_key: 'secret' }],
      `${at}[0].api_key: unknown field; a fal route has backend, name, model, base_url, key_env, map, concurrency`,
    ],
    [[{ backend: 'fal', model: 'm' }], `${at}[0].key_env: must name the setting holding the credential`],
    [[{ backend: 'fal', model: 'm', key_env: 'fal-key-123' }], `(got "fal-key-123"); the catalog file never holds the credential itself`],
    [[{ backend: 'fal', model: 'm', key_env: 'PATH' }], `${at}[0].key_env: must name the setting`],
    [[{ backend: 'same-api', key_env: 'UP_KEY' }], `${at}[0].base_url: is required for a same-api route`],
    [
      [{ backend: 'same-api', key_env: 'UP_KEY', base_url: 'ftp://x' }],
      `${at}[0].base_url: must be an http:// or https:// URL without user:password (got "ftp://x")`,
    ],
    [
      [{ backend: 'same-api', key_env: 'UP_KEY', base_url: 'https://u:p@x.example' }],
      `${at}[0].base_url: must be an http:// or https:// URL without user:password`,
    ],
    [[{ backend: 'fal', model: 'm', key_env: 'FAL_KEY', concurrency: 0 }], `${at}[0].concurrency: must be a whole number from 1 to 100000 (got 0)`],
    [[{ backend: 'fal', model: 'm', key_env: 'FAL_KEY', concurrency: 2.5 }], `${at}[0].concurrency: must be a whole number from 1 to 100000 (got 2.5)`],
    [[{ backend: 'fal', model: 'm', key_env: 'FAL_KEY', map: ['x'] }], `${at}[0].map: must be an object with "rename", "set" and/or "omit" (got ["x"])`],
    [
      [{ backend: 'fal', model: 'm', key_env: 'FAL_KEY', map: { duration: 'seconds' } }],
      `${at}[0].map.duration: unknown field; a map has "rename", "set" and "omit"`,
    ],
    [
      [{ backend: 'fal', model: 'm', key_env: 'FAL_KEY', map: { rename: { duration: 5 } } }],
      `${at}[0].map.rename: must be an object of field names to new field names, e.g. {"duration": "seconds"} (got {"duration":5})`,
    ],
    [[{ backend: 'fal', model: 'm', key_env: 'FAL_KEY', map: { omit: 'seed' } }], `${at}[0].map.omit: must be a list of field names (got "seed")`],
    [
      [{ backend: 'fal', model: 'm', key_env: 'FAL_KEY', name: 'local' }],
      `${at}[0].name: must be a name of letters, digits and . _ : # / - other than "local" (got "local")`,
    ],
    [
      [
        { backend: 'fal', model: 'm', key_env: 'FAL_KEY', name: 'x' },
        { backend: 'fal', model: 'n', key_env: 'FAL_KEY', name: 'x' },
      ],
      `${at}[1].name: route name "x" is already used by models."seedance-2.0".routes[0]`,
    ],
    [
      [{ backend: 'same-api', base_url: 'https://up.example.com', key_env: 'UP_KEY', as_is: true }],
      `${at}[0].as_is: is for fal, replicate, kie routes (a same-api route maps GenGate's names)`,
    ],
    [
      [{ backend: 'fal', model: 'm', key_env: 'FAL_KEY', as_is: 'yes' }],
      `${at}[0].as_is: must be true (send the input under the model's own names) or false (got "yes")`,
    ],
  ])('refuses %j naming the field', (list, message) => {
    expect(() => buildCatalog(routes(list))).toThrow(ConfigError);
    expect(() => buildCatalog(routes(list))).toThrow(message);
  });
});
