// The scratch app: elects with createBaton and reports on the page (window.__result).
import { elect } from './elect.js';

elect((result) => {
  window.__result = result;
});
