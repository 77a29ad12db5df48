// Webhook subscriptions rule 1: the url must use https:// and be publicly reachable;
// plain http, localhost, private-network and platform-internal addresses give 400.
import { isIP } from 'node:net';
import { describe, expect, test } from 'vitest';
import { InvalidInputError } from '../../server/errors.ts';
import { assertDeliverableUrl, BlockedAddressError, createGuardedLookup, isPublicAddress, type ResolveAll } from '../../server/outbound/address-guard.ts';

const noExemptions = { allowHosts: [] as string[] };

async function refusal(url: string, allowHosts: string[] = []): Promise<string> {
  const error = await assertDeliverableUrl(url, { allowHosts }).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error, `${url} should be refused`).toBeInstanceOf(InvalidInputError);
  expect((error as InvalidInputError).status).toBe(400);
  return (error as InvalidInputError).message;
}

describe('refused URLs name the field and the reason', () => {
  test.each([
    ['http://93.184.215.14/hook', 'url must use https://'],
    ['https://2130706433/hook', 'url resolves to a loopback address (127.0.0.1)'],
    ['https://0177.0.0.1/hook', 'url resolves to a loopback address (127.0.0.1)'],
    ['https://0x7f.0.0.1/hook', 'url resolves to a loopback address (127.0.0.1)'],
    ['https://127.1/hook', 'url resolves to a loopback address (127.0.0.1)'],
    ['https://[::1]/hook', 'url resolves to a loopback address (::1)'],
    ['https://[::ffff:127.0.0.1]/hook', 'url resolves to a loopback address (::ffff:7f00:1 = 127.0.0.1)'],
    ['https://[::ffff:10.0.0.1]/hook', 'url resolves to a private address (::ffff:a00:1 = 10.0.0.1)'],
    ['https://[64:ff9b::192.168.1.1]/hook', 'url resolves to a private address (64:ff9b::c0a8:101 = 192.168.1.1)'],
    ['https://[2002:a9fe:a9fe::1]/hook', 'url resolves to a link-local address (2002:a9fe:a9fe::1 = 169.254.169.254)'],
    ['https://10.0.0.5/hook', 'url resolves to a private address (10.0.0.5)'],
    ['https://172.16.3.4/hook', 'url resolves to a private address (172.16.3.4)'],
    ['https://192.168.0.1/hook', 'url resolves to a private address (192.168.0.1)'],
    ['https://169.254.169.254/latest/meta-data', 'url resolves to a link-local address (169.254.169.254)'],
    ['https://100.64.0.1/hook', 'url resolves to a shared (carrier-grade NAT) address (100.64.0.1)'],
    ['https://0.0.0.0/hook', 'url resolves to an unspecified address (0.0.0.0)'],
    ['https://[::]/hook', 'url resolves to an unspecified address (::)'],
    ['https://255.255.255.255/hook', 'url resolves to a broadcast address (255.255.255.255)'],
    ['https://224.0.0.1/hook', 'url resolves to a multicast address (224.0.0.1)'],
    ['https://[ff02::1]/hook', 'url resolves to a multicast address (ff02::1)'],
    ['https://192.0.2.1/hook', 'url resolves to a documentation address (192.0.2.1)'],
    ['https://198.51.100.7/hook', 'url resolves to a documentation address (198.51.100.7)'],
    ['https://203.0.113.9/hook', 'url resolves to a documentation address (203.0.113.9)'],
    ['https://[2001:db8::1]/hook', 'url resolves to a documentation address (2001:db8::1)'],
    ['https://[fc00::1]/hook', 'url resolves to a unique-local address (fc00::1)'],
    ['https://[fd12:3456::1]/hook', 'url resolves to a unique-local address (fd12:3456::1)'],
    ['https://[fe80::1]/hook', 'url resolves to a link-local address (fe80::1)'],
    ['https://localhost/hook', 'url resolves to a loopback address (127.0.0.1)'],
    ['https://does-not-exist.invalid/hook', 'url host does not resolve (does-not-exist.invalid)'],
    ['not a url', 'url must be a valid absolute URL'],
  ])('%s is refused: %s', async (url, message) => {
    expect(await refusal(url)).toBe(message);
  });
});

describe('accepted URLs', () => {
  test('an https URL on a public address passes', async () => {
    await expect(assertDeliverableUrl('https://93.184.215.14/hook', noExemptions)).resolves.toBeUndefined();
    await expect(assertDeliverableUrl('https://[2606:4700:4700::1111]:8443/hook', noExemptions)).resolves.toBeUndefined();
  });

  test('a host named in WEBHOOK_ALLOW_HOSTS is exempt from the public-address rule, and only that host', async () => {
    await expect(assertDeliverableUrl('https://localhost:8443/hook', { allowHosts: ['localhost'] })).resolves.toBeUndefined();
    await expect(assertDeliverableUrl('https://LOCALHOST./hook', { allowHosts: ['localhost'] })).resolves.toBeUndefined();
    expect(await refusal('https://10.0.0.5/hook', ['localhost'])).toBe('url resolves to a private address (10.0.0.5)');
  });

  test('an address in WEBHOOK_ALLOW_HOSTS exempts that address, literal or resolved', async () => {
    await expect(assertDeliverableUrl('https://127.0.0.1/hook', { allowHosts: ['127.0.0.1'] })).resolves.toBeUndefined();
    await expect(assertDeliverableUrl('https://[::1]/hook', { allowHosts: ['::1'] })).resolves.toBeUndefined();
    await expect(assertDeliverableUrl('https://localhost/hook', { allowHosts: ['127.0.0.1', '::1'] })).resolves.toBeUndefined();
  });

  test('the exemption never lifts the https:// rule', async () => {
    expect(await refusal('http://localhost/hook', ['localhost'])).toBe('url must use https://');
  });
});

describe('isPublicAddress', () => {
  test.each([
    ['8.8.8.8', true],
    ['93.184.215.14', true],
    ['2606:4700:4700::1111', true],
    ['::ffff:8.8.8.8', true],
    ['64:ff9b::808:808', true],
    ['2002:808:808::1', true],
    ['127.0.0.1', false],
    ['10.255.255.255', false],
    ['172.31.0.1', false],
    ['172.32.0.1', true],
    ['100.127.255.255', false],
    ['100.128.0.1', true],
    ['198.18.0.1', false],
    ['240.0.0.1', false],
    ['::ffff:192.168.0.1', false],
    ['::ffff:0:192.168.0.1', false],
    ['::127.0.0.1', false],
    ['64:ff9b:1::1', false],
    ['fe80::1%eth0', false],
    ['fec0::1', false],
    ['::2', false],
    ['not-an-address', false],
  ])('%s public: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('the connect-time lookup (DNS rebinding)', () => {
  // A resolver whose answers change between calls, as a rebinding attacker's DNS does.
  function rebindingResolver(answers: string[][]): ResolveAll {
    let call = 0;
    return (_hostname, _options, callback) => {
      const addresses = answers[Math.min(call++, answers.length - 1)]!;
      callback(null, addresses.map((address) => ({ address, family: isIP(address) })));
    };
  }

  function lookupOnce(lookup: ReturnType<typeof createGuardedLookup>, hostname: string, all: boolean): Promise<{ error: Error | null; result: unknown }> {
    return new Promise((resolve) => {
      (lookup as (...args: unknown[]) => void)(hostname, { all }, (error: Error | null, address: unknown, family?: number) =>
        resolve({ error, result: all ? address : error ? null : { address, family } }),
      );
    });
  }

  test('a name that resolved publicly when the url was checked and privately at connect time is refused at connect time', async () => {
    const lookup = createGuardedLookup([], rebindingResolver([['93.184.215.14'], ['127.0.0.1']]));
    expect(await lookupOnce(lookup, 'rebind.example', true)).toEqual({ error: null, result: [{ address: '93.184.215.14', family: 4 }] });
    const second = await lookupOnce(lookup, 'rebind.example', false);
    expect(second.error).toBeInstanceOf(BlockedAddressError);
    expect(second.error!.message).toBe('url resolves to a loopback address (127.0.0.1)');
  });

  test('only public addresses of a mixed answer are offered to the connection', async () => {
    const lookup = createGuardedLookup([], rebindingResolver([['10.0.0.5', '93.184.215.14', '::ffff:169.254.169.254', '2606:4700::1111']]));
    expect((await lookupOnce(lookup, 'mixed.example', true)).result).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:4700::1111', family: 6 },
    ]);
    expect((await lookupOnce(lookup, 'mixed.example', false)).result).toEqual({ address: '93.184.215.14', family: 4 });
  });

  test('an allowed host connects to whatever it resolves to; an allowed address only to itself', async () => {
    const resolver = rebindingResolver([['127.0.0.1', '10.0.0.5']]);
    expect((await lookupOnce(createGuardedLookup(['local.test'], resolver), 'local.test', true)).result).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ]);
    expect((await lookupOnce(createGuardedLookup(['127.0.0.1'], resolver), 'other.test', true)).result).toEqual([{ address: '127.0.0.1', family: 4 }]);
  });
});
