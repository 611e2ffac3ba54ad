// Prints one plain closing line, "Tests: N passed, N failed, N skipped", after
// vitest's own summary, so CI logs end with a line any tool can read.
//
// "failed" counts every failure, not only failed test cases: a file that could
// not be loaded, a hook that threw (a beforeAll failure leaves its tests
// skipped, so counting tests alone would hide it), and an unhandled error or
// rejection. Each failure outside a test case is also named on its own line.
import type { Reporter, SerializedError, TestModule, TestSuite } from 'vitest/node';

export interface RunCounts {
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  /** One line per failure that is not a failed test case. */
  readonly otherFailures: readonly string[];
}

function firstLine(error: SerializedError): string {
  return String(error.message ?? error.name ?? 'unknown error').split('\n')[0]!;
}

export function countRun(
  testModules: ReadonlyArray<TestModule>,
  unhandledErrors: ReadonlyArray<SerializedError>,
): RunCounts {
  let passed = 0;
  let failedTests = 0;
  let skipped = 0;
  const otherFailures: string[] = [];
  for (const testModule of testModules) {
    for (const test of testModule.children.allTests()) {
      const state = test.result().state;
      if (state === 'passed') passed++;
      else if (state === 'failed') failedTests++;
      else skipped++;
    }
    const before = otherFailures.length;
    // Errors of the file itself (import errors, top-level hooks) and of each suite (its hooks).
    const holders: Array<TestModule | TestSuite> = [testModule, ...testModule.children.allSuites()];
    for (const holder of holders) {
      const where =
        holder.type === 'module' ? holder.relativeModuleId : `${holder.module.relativeModuleId} > ${holder.fullName}`;
      for (const error of holder.errors()) otherFailures.push(`${where}: ${firstLine(error)}`);
    }
    // A file vitest reports as failed with no failed test and no error of its own still counts.
    const moduleFailedTests = [...testModule.children.allTests('failed')].length;
    if (testModule.state() === 'failed' && moduleFailedTests === 0 && otherFailures.length === before) {
      otherFailures.push(`${testModule.relativeModuleId}: the file failed`);
    }
  }
  for (const error of unhandledErrors) otherFailures.push(`unhandled error: ${firstLine(error)}`);
  return { passed, failed: failedTests + otherFailures.length, skipped, otherFailures };
}

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const counts = countRun(testModules, unhandledErrors);
    const details = counts.otherFailures.map((line) => `  failed outside a test: ${line}\n`).join('');
    process.stdout.write(
      `\n${details}Tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`,
    );
  }
}
