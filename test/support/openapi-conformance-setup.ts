// Vitest setup file: every response of every app a test builds is checked
// against the app's OpenAPI document (openapi-conformance.ts); a test whose
// responses the document does not describe fails, naming method, path and status.
import { afterAll, afterEach } from 'vitest';
import { checkResponsesOfNewApps, responsesCheckedCount, takeViolations } from './openapi-conformance.ts';

const stopChecking = checkResponsesOfNewApps();

function failOnViolations(): void {
  const violations = takeViolations();
  if (violations.length > 0) {
    throw new Error(
      `Responses that the OpenAPI document does not describe (fix the document or the route):\n- ${violations.join('\n- ')}`,
    );
  }
}

afterEach(failOnViolations);
afterAll(() => {
  stopChecking();
  if (process.env.PAYGATE_CONFORMANCE_REPORT)
    process.stderr.write(`openapi conformance: ${responsesCheckedCount()} responses checked\n`);
  failOnViolations();
});
