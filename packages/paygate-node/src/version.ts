// Sent in the User-Agent; the same as package.json's version (a test compares them).
export const SDK_VERSION = '0.1.0';
