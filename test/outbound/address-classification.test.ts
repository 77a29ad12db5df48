// The public-address rule's table, address by address: every blocked range refuses with its
// own reason at its edges, IPv4 addresses embedded in IPv6 are judged as the IPv4 address, and
// only global unicast IPv6 (2000::/3) is public. address-guard.test.ts covers URLs and DNS.
import { describe, expect, test } from 'vitest';
import { classifyAddress, refuseUrlWithoutLookup } from '../../server/outbound/address-guard.ts';

describe('classifyAddress: each blocked range, at its first and last address', () => {
  test.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'reserved'],
    ['0.255.255.255', 'reserved'],
    ['10.0.0.0', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.0', 'shared (carrier-grade NAT)'],
    ['100.127.255.255', 'shared (carrier-grade NAT)'],
    ['127.0.0.0', 'loopback'],
    ['127.255.255.255', 'loopback'],
    ['169.254.0.0', 'link-local'],
    ['169.254.255.255', 'link-local'],
    ['172.16.0.0', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.0', 'reserved'],
    ['192.0.0.255', 'reserved'],
    ['192.0.2.0', 'documentation'],
    ['192.0.2.255', 'documentation'],
    ['192.88.99.0', 'reserved'],
    ['192.88.99.255', 'reserved'],
    ['192.168.0.0', 'private'],
    ['192.168.255.255', 'private'],
    ['198.18.0.0', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.0', 'documentation'],
    ['203.0.113.255', 'documentation'],
    ['224.0.0.0', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['240.0.0.0', 'reserved'],
    ['255.255.255.254', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['64:ff9b:1::', 'private'],
    ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'private'],
    ['100::', 'reserved'],
    ['100::ffff:ffff:ffff:ffff', 'reserved'],
    ['2001::', 'reserved'],
    ['2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff', 'reserved'],
    ['2001:db8::', 'documentation'],
    ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation'],
    ['3fff::', 'documentation'],
    ['3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation'],
    ['fc00::', 'unique-local'],
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'unique-local'],
    ['fe80::', 'link-local'],
    ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'link-local'],
    ['fec0::', 'site-local'],
    ['feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'site-local'],
    ['ff00::', 'multicast'],
    ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'multicast'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toEqual({ kind, address });
  });

  test.each([
    '1.0.0.0',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.0',
    '192.0.3.0',
    '192.88.98.255',
    '192.88.100.0',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2000::',
    '2001:200::',
    '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff',
    '2001:db9::',
    '3ffe:ffff::1',
    '3fff:1000::',
  ])('%s is public', (address) => {
    expect(classifyAddress(address)).toBeNull();
  });
});

describe('classifyAddress: IPv6 outside 2000::/3 is not global', () => {
  test.each(['1000::1', '1fff:ffff::1', '4000::1', 'bfff::1', 'e000::1', '::1:0:0:0'])('%s is non-global', (address) => {
    expect(classifyAddress(address)).toEqual({ kind: 'non-global', address });
  });
});

describe('classifyAddress: IPv4 embedded in IPv6 is judged as that IPv4 address', () => {
  test.each([
    ['::ffff:127.0.0.1', 'loopback', '::ffff:127.0.0.1 = 127.0.0.1'],
    ['::ffff:7f00:1', 'loopback', '::ffff:7f00:1 = 127.0.0.1'],
    ['::10.1.2.3', 'private', '::10.1.2.3 = 10.1.2.3'],
    ['::ffff:0:192.168.1.1', 'private', '::ffff:0:192.168.1.1 = 192.168.1.1'],
    ['64:ff9b::169.254.169.254', 'link-local', '64:ff9b::169.254.169.254 = 169.254.169.254'],
    ['2002:c0a8:0101::', 'private', '2002:c0a8:0101:: = 192.168.1.1'],
    ['2002:7f00:1:1:1:1:1:1', 'loopback', '2002:7f00:1:1:1:1:1:1 = 127.0.0.1'],
  ])('%s is %s', (address, kind, shown) => {
    expect(classifyAddress(address)).toEqual({ kind, address: shown });
  });

  test.each(['::ffff:8.8.8.8', '::ffff:0:8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::'])('%s embeds a public address and is public', (address) => {
    expect(classifyAddress(address)).toBeNull();
  });

  test.each([
    // One byte off each embedding prefix: not an embedding, so judged as IPv6.
    ['::fffe:127.0.0.1', 'non-global'],
    ['::feff:127.0.0.1', 'non-global'],
    ['::ff:127.0.0.1', 'non-global'],
    ['0:0:0:0:1:ffff:7f00:1', 'non-global'],
    ['::ffff:1:127.0.0.1', 'non-global'],
    ['::fffe:0:127.0.0.1', 'non-global'],
    ['::feff:0:127.0.0.1', 'non-global'],
    ['0:0:0:1:ffff:0:7f00:1', 'non-global'],
    ['64:ff9a::7f00:1', 'non-global'],
    ['64:fe9b::7f00:1', 'non-global'],
    ['65:ff9b::7f00:1', 'non-global'],
    ['164:ff9b::7f00:1', 'non-global'],
    ['64:ff9b:0:0:0:1:7f00:1', 'non-global'],
    ['2003:7f00:1::', null],
    ['2102:7f00:1::', null],
  ])('%s is not an embedding (%s)', (address, kind) => {
    expect(classifyAddress(address)?.kind ?? null).toBe(kind);
  });

  test('the IPv4-compatible ::0 and ::1 stay the unspecified and loopback IPv6 addresses', () => {
    expect(classifyAddress('0:0:0:0:0:0:0:0')).toEqual({ kind: 'unspecified', address: '0:0:0:0:0:0:0:0' });
    expect(classifyAddress('0:0:0:0:0:0:0:1')).toEqual({ kind: 'loopback', address: '0:0:0:0:0:0:0:1' });
    expect(classifyAddress('::0.0.0.2')).toEqual({ kind: 'reserved', address: '::0.0.0.2 = 0.0.0.2' });
    expect(classifyAddress('::2')).toEqual({ kind: 'reserved', address: '::2 = 0.0.0.2' });
    expect(classifyAddress('::ffff:ffff')).toEqual({ kind: 'broadcast', address: '::ffff:ffff = 255.255.255.255' });
  });
});

describe('classifyAddress: literal forms', () => {
  test('brackets and a zone are stripped; the zone does not reach the message', () => {
    expect(classifyAddress('[fe80::1%eth0]')).toEqual({ kind: 'link-local', address: 'fe80::1' });
    expect(classifyAddress('fe80::1%25eth0')).toEqual({ kind: 'link-local', address: 'fe80::1' });
    expect(classifyAddress('[2606:4700::1111]')).toBeNull();
  });

  test('anything that is not an address is refused as reserved', () => {
    expect(classifyAddress('example.com')).toEqual({ kind: 'reserved', address: 'example.com' });
    expect(classifyAddress('127.0.0.1.5')).toEqual({ kind: 'reserved', address: '127.0.0.1.5' });
    expect(classifyAddress('')).toEqual({ kind: 'reserved', address: '' });
  });

  test('IPv6 written in full, with :: first, in the middle or last, parses the same', () => {
    expect(classifyAddress('2001:0db8:0000:0000:0000:0000:0000:0001')?.kind).toBe('documentation');
    expect(classifyAddress('2001:db8::')?.kind).toBe('documentation');
    expect(classifyAddress('2001:db8:1::1')?.kind).toBe('documentation');
    expect(classifyAddress('::ffff:10.0.0.1')?.kind).toBe('private');
    expect(classifyAddress('fe80:0:0:0:0:0:0:1')?.kind).toBe('link-local');
  });
});

describe('refuseUrlWithoutLookup', () => {
  const check = (url: string, allowHosts: string[] = []) => refuseUrlWithoutLookup(new URL(url), allowHosts);

  test('https only, no credentials', () => {
    expect(check('http://93.184.215.14/')).toBe('url must use https://');
    expect(check('ftp://93.184.215.14/')).toBe('url must use https://');
    expect(check('https://user@93.184.215.14/')).toBe('url must not contain credentials');
    expect(check('https://:secret@93.184.215.14/')).toBe('url must not contain credentials');
  });

  test('a literal address is judged now, a name is left to resolution', () => {
    expect(check('https://10.1.2.3/')).toBe('url resolves to a private address (10.1.2.3)');
    expect(check('https://[::1]/')).toBe('url resolves to a loopback address (::1)');
    expect(check('https://[fd00::1]/')).toBe('url resolves to a unique-local address (fd00::1)');
    expect(check('https://100.64.0.1/')).toBe('url resolves to a shared (carrier-grade NAT) address (100.64.0.1)');
    expect(check('https://8.8.8.8/')).toBeNull();
    expect(check('https://internal.example/')).toBeNull();
  });

  test('an allowed address is exempt, compared without brackets, case or a trailing dot', () => {
    expect(check('https://10.1.2.3/', ['10.1.2.3'])).toBeNull();
    expect(check('https://[::1]/', ['[::1]'])).toBeNull();
    expect(check('https://[::1]/', [' ::1 '])).toBeNull();
    expect(check('https://[fe80::a]/', ['FE80::A'])).toBeNull();
    expect(check('https://10.1.2.3/', ['10.1.2.4'])).toBe('url resolves to a private address (10.1.2.3)');
  });

  test('"a" or "an" before the reason, as English has it', () => {
    expect(check('https://0.0.0.0/')).toBe('url resolves to an unspecified address (0.0.0.0)');
    expect(check('https://[fc00::5]/')).toBe('url resolves to a unique-local address (fc00::5)');
    expect(check('https://224.0.0.9/')).toBe('url resolves to a multicast address (224.0.0.9)');
  });
});
