// Files imported as text by the tests (Vite's `?raw`).
declare module "*?raw" {
  const text: string;
  export default text;
}
