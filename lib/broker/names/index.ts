export { type BrokerRegistration, NameServer, queueDataOn } from "./name-server.js";
export { RouteCache } from "./route-cache.js";
export { closestTopic, TopicSuggestions } from "./topic-suggestions.js";
export { queueIds, TopicService } from "./topics.js";
