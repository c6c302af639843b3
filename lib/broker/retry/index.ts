export { SendBackService } from "./send-back.js";
