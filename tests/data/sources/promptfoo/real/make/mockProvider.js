// Scripted mock provider written for the kagreport fixtures of issue 25 (CC0).
// Deterministic: the answer depends on the question and on how many times that
// question was asked before (so the three repeats differ). A "BOOM" question
// returns a provider error.
const SCRIPT = {
  'What is the capital of France?': ['Paris', 'Paris', 'The capital is Paris.'],
  'How many legs does a spider have? Answer with a number.': ['8', 'eight', '8'],
  'What colour is a ripe banana?': ['yellow', 'Yellow', 'green'],
  'Which gas do plants absorb from the air? A) Oxygen B) Carbon dioxide C) Helium D) Neon. Answer with the letter only.': ['B', 'B', 'A'],
  'Which animal is a mammal? A) Shark B) Trout C) Dolphin D) Octopus. Answer with the letter only.': ['C', 'D', 'C'],
  'Name the largest ocean on Earth.': ['Atlantic', 'the Pacific Ocean', 'Pacific'],
  'Repeat exactly: hello world': ['hello world', 'hello', 'Hello world'],
};
const calls = {};

class MockProvider {
  constructor(options) {
    this.providerId = (options && options.id) || 'mock-scripted';
  }
  id() {
    return this.providerId;
  }
  async callApi(prompt) {
    const q = prompt.replace(/^Question: /, '').replace(/\nAnswer:$/, '').trim();
    if (q.includes('BOOM')) {
      return { error: 'mock provider failure for a BOOM question' };
    }
    const answers = SCRIPT[q];
    if (!answers) {
      return { error: `no scripted answer for: ${q}` };
    }
    const k = calls[q] || 0;
    calls[q] = k + 1;
    const output = answers[k % answers.length];
    return { output, tokenUsage: { prompt: 10, completion: output.split(' ').length, total: 10 + output.split(' ').length } };
  }
}

module.exports = MockProvider;
