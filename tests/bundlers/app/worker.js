// The scratch app in a dedicated worker: reports to the page that started it.
import { elect } from './elect.js';

elect((result) => self.postMessage(result));
