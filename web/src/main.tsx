import { render } from 'preact';
import { App } from './app';
import './styles.css';
import 'highlight.js/styles/github.css';

render(<App />, document.getElementById('app')!);
