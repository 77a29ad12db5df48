// The set-up most test files share: one service for the file, started before its
// tests with the accounts they use, stopped after them. The file keeps its own
// variables; `receive` fills them once everything is up.
import { afterAll, beforeAll } from 'vitest';
import { startTestService, type TestService } from './service.ts';

export type TestAccount = { userId: string; apiKey: string };

export function serviceForFile(
  options: {
    /** What startTestService takes (configuration, a router of the file's own). */
    start?: Parameters<typeof startTestService>[0];
    /** One account per entry, created in this order. */
    accounts?: Parameters<TestService['createAccount']>[0][];
  },
  receive: (started: { service: TestService; accounts: TestAccount[] }) => void,
): void {
  let service: TestService | undefined;
  beforeAll(async () => {
    service = await startTestService(options.start);
    const accounts: TestAccount[] = [];
    for (const account of options.accounts ?? []) accounts.push(await service.createAccount(account));
    receive({ service, accounts });
  });
  afterAll(async () => {
    await service?.stop();
  });
}
