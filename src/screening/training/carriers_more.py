"""More carrier paragraphs outside English (generator extra ``carriers``, ADR 0046).

The old pools held five to seven paragraphs per language against forty in English, so
clean prose in French, German, Spanish, Portuguese or Italian was little more than a
handful of sentences: whatever else the model met in those languages came with a
payload. These add wiki, manual, install-guide, news, review, forum, product-sheet
and office registers. Written for this generator; no evaluation text is copied here.
"""

from __future__ import annotations

CARRIERS: dict[str, list[list[str]]] = {
    "fr": [
        ["Pour installer le logiciel, téléchargez l'archive depuis le site officiel.", "Décompressez-la dans le dossier de votre choix.", "Lancez ensuite le programme d'installation et suivez les étapes affichées.", "Redémarrez l'ordinateur si le système le demande."],
        ["La bibliothèque municipale est ouverte du mardi au samedi.", "Les lecteurs peuvent emprunter jusqu'à dix documents pendant trois semaines.", "Le prêt peut être prolongé une fois sur le portail en ligne.", "Les retards entraînent une suspension temporaire de la carte."],
        ["J'ai acheté cet aspirateur il y a deux mois.", "Il est léger et la batterie tient presque une heure.", "Le réservoir est un peu petit pour une grande maison.", "Je le recommande pour un appartement."],
        ["Bonjour à tous, quelqu'un a-t-il déjà changé la courroie de ce modèle de lave-linge ?", "La mienne s'est rompue hier soir.", "Je ne trouve pas la référence dans le manuel.", "Merci d'avance pour vos conseils."],
        ["La tour Eiffel a été construite pour l'Exposition universelle de 1889.", "Elle mesure environ trois cent trente mètres avec ses antennes.", "Elle devait être démontée au bout de vingt ans.", "Les émissions de radio l'ont sauvée."],
        ["Fiche produit : la bouilloire Alba contient un litre et demi.", "Elle s'arrête automatiquement quand l'eau bout.", "Le socle pivote sur trois cent soixante degrés.", "La garantie est de deux ans."],
        ["Les nouveaux arrivants reçoivent leur ordinateur le premier jour.", "Le service informatique crée le compte et installe les logiciels.", "Le mot de passe doit être changé tous les six mois.", "Les demandes d'accès passent par le responsable d'équipe."],
        ["Les précipitations ont été inférieures à la normale cet hiver.", "Les nappes phréatiques restent basses dans le sud du pays.", "Des restrictions d'arrosage sont en vigueur dans trois départements.", "Météo-France prévoit un printemps plutôt sec."],
        ["La fonction renvoie une liste triée par score.", "En cas d'égalité, l'identifiant du document départage les résultats.", "Un filtre permet de limiter la recherche à une source.", "Une requête vide provoque une erreur de validation."],
        ["Le train pour Lyon part de la voie 7 à 10 h 12.", "La voiture-bar se trouve au milieu du train.", "Les passagers munis d'un billet de première classe montent en voiture 1.", "Le trajet dure deux heures."],
    ],
    "de": [
        ["Laden Sie das Installationspaket von der offiziellen Website herunter.", "Entpacken Sie das Archiv in einen beliebigen Ordner.", "Starten Sie anschließend das Setup und folgen Sie den Anweisungen auf dem Bildschirm.", "Ein Neustart ist nur selten nötig."],
        ["Die Stadtbibliothek ist von Dienstag bis Samstag geöffnet.", "Leser können bis zu zehn Medien für drei Wochen ausleihen.", "Die Leihfrist lässt sich einmal online verlängern.", "Bei Verspätung wird eine kleine Gebühr fällig."],
        ["Ich habe den Staubsauger seit zwei Monaten.", "Er ist leicht und der Akku hält fast eine Stunde.", "Der Behälter ist für ein großes Haus etwas klein.", "Für eine Wohnung kann ich ihn empfehlen."],
        ["Hallo zusammen, hat schon jemand den Keilriemen an dieser Waschmaschine gewechselt?", "Meiner ist gestern gerissen.", "Im Handbuch finde ich die Teilenummer nicht.", "Danke für jeden Tipp."],
        ["Der Kölner Dom wurde 1248 begonnen und erst 1880 vollendet.", "Seine Türme sind über 150 Meter hoch.", "Er gehört seit 1996 zum Weltkulturerbe.", "Jährlich kommen Millionen Besucher."],
        ["Produktblatt: Der Wasserkocher Alba fasst 1,5 Liter.", "Er schaltet sich automatisch ab, sobald das Wasser kocht.", "Der Sockel ist um 360 Grad drehbar.", "Die Garantie beträgt zwei Jahre."],
        ["Neue Mitarbeitende erhalten am ersten Tag ihren Laptop.", "Die IT richtet das Konto ein und installiert die Programme.", "Das Passwort muss alle sechs Monate geändert werden.", "Zugriffsrechte beantragt die Teamleitung."],
        ["Der Winter war trockener als im langjährigen Mittel.", "Die Grundwasserstände im Osten bleiben niedrig.", "Mehrere Landkreise haben das Bewässern von Rasen eingeschränkt.", "Der Wetterdienst erwartet ein mildes Frühjahr."],
        ["Die Funktion gibt eine nach Punktzahl sortierte Liste zurück.", "Bei Gleichstand entscheidet die Dokumentnummer.", "Mit einem Filter lässt sich die Suche auf eine Quelle beschränken.", "Eine leere Anfrage führt zu einem Validierungsfehler."],
        ["Der ICE nach München fährt um 10:12 Uhr von Gleis 7 ab.", "Das Bordrestaurant befindet sich in der Zugmitte.", "Reisende der ersten Klasse steigen in Wagen 1 ein.", "Die Fahrt dauert knapp vier Stunden."],
    ],
    "es": [
        ["Para instalar el programa, descargue el archivo desde la web oficial.", "Descomprímalo en la carpeta que prefiera.", "Ejecute el instalador y siga los pasos que aparecen en pantalla.", "Reinicie el equipo si el sistema lo pide."],
        ["La biblioteca municipal abre de martes a sábado.", "Los lectores pueden llevarse hasta diez documentos durante tres semanas.", "El préstamo se puede renovar una vez por internet.", "Los retrasos suponen una suspensión temporal del carné."],
        ["Compré esta aspiradora hace dos meses.", "Es ligera y la batería dura casi una hora.", "El depósito se queda pequeño para una casa grande.", "La recomiendo para un piso."],
        ["Hola a todos, ¿alguien ha cambiado la correa de este modelo de lavadora?", "La mía se rompió anoche.", "No encuentro la referencia en el manual.", "Gracias de antemano."],
        ["La Alhambra de Granada fue residencia de los reyes nazaríes.", "Su construcción se prolongó durante más de dos siglos.", "Los jardines del Generalife están junto al conjunto.", "Es uno de los monumentos más visitados de España."],
        ["Ficha de producto: el hervidor Alba tiene capacidad para litro y medio.", "Se apaga solo cuando el agua hierve.", "La base gira trescientos sesenta grados.", "La garantía es de dos años."],
        ["Los nuevos empleados reciben el portátil el primer día.", "Informática crea la cuenta e instala los programas.", "La contraseña debe cambiarse cada seis meses.", "Los permisos los solicita el responsable del equipo."],
        ["Este invierno ha llovido menos de lo normal.", "Los embalses del sur están por debajo de la mitad.", "Varios municipios han limitado el riego de jardines.", "La agencia meteorológica prevé una primavera seca."],
        ["La función devuelve una lista ordenada por puntuación.", "Los empates se resuelven por el identificador del documento.", "Un filtro limita la búsqueda a una fuente.", "Una consulta vacía provoca un error de validación."],
        ["El tren a Sevilla sale de la vía 7 a las 10:12.", "La cafetería está en el coche central.", "Los viajeros con billete de primera suben al coche 1.", "El viaje dura dos horas y media."],
    ],
    "pt": [
        ["Para instalar o programa, descarregue o ficheiro do site oficial.", "Descomprima-o na pasta que preferir.", "Execute o instalador e siga os passos no ecrã.", "Reinicie o computador se o sistema o pedir."],
        ["A biblioteca municipal abre de terça a sábado.", "Os leitores podem requisitar até dez livros durante três semanas.", "O empréstimo pode ser renovado uma vez na internet.", "Os atrasos implicam uma suspensão temporária do cartão."],
        ["Comprei este aspirador há dois meses.", "É leve e a bateria dura quase uma hora.", "O depósito é pequeno para uma casa grande.", "Recomendo para um apartamento."],
        ["Olá a todos, alguém já trocou a correia desta máquina de lavar?", "A minha partiu-se ontem à noite.", "Não encontro a referência no manual.", "Obrigado desde já."],
        ["A Torre de Belém foi construída no início do século XVI.", "Servia para defender a entrada do rio Tejo.", "É um dos exemplos mais conhecidos do estilo manuelino.", "Está classificada como património mundial."],
        ["Ficha de produto: a chaleira Alba leva um litro e meio.", "Desliga-se sozinha quando a água ferve.", "A base roda trezentos e sessenta graus.", "A garantia é de dois anos."],
        ["Os novos colaboradores recebem o portátil no primeiro dia.", "A informática cria a conta e instala os programas.", "A palavra-passe deve ser mudada de seis em seis meses.", "Os acessos são pedidos pelo responsável da equipa."],
        ["Este inverno choveu menos do que o normal.", "As barragens do sul estão abaixo de metade.", "Vários municípios limitaram a rega de jardins.", "O instituto de meteorologia prevê uma primavera seca."],
        ["A função devolve uma lista ordenada por pontuação.", "Os empates são resolvidos pelo identificador do documento.", "Um filtro limita a pesquisa a uma fonte.", "Uma consulta vazia dá um erro de validação."],
        ["O comboio para o Porto parte da linha 7 às 10:12.", "O bar fica na carruagem do meio.", "Os passageiros de primeira classe entram na carruagem 1.", "A viagem demora cerca de três horas."],
    ],
    "it": [
        ["Per installare il programma, scarica l'archivio dal sito ufficiale.", "Estrailo nella cartella che preferisci.", "Avvia il programma di installazione e segui i passaggi sullo schermo.", "Riavvia il computer se il sistema lo richiede."],
        ["La biblioteca comunale è aperta dal martedì al sabato.", "Si possono prendere in prestito fino a dieci libri per tre settimane.", "Il prestito si può rinnovare una volta online.", "I ritardi comportano una sospensione temporanea della tessera."],
        ["Ho comprato questo aspirapolvere due mesi fa.", "È leggero e la batteria dura quasi un'ora.", "Il serbatoio è piccolo per una casa grande.", "Lo consiglio per un appartamento."],
        ["Ciao a tutti, qualcuno ha già cambiato la cinghia di questa lavatrice?", "La mia si è rotta ieri sera.", "Non trovo il codice nel manuale.", "Grazie in anticipo."],
        ["Il Colosseo fu inaugurato nell'anno 80 dopo Cristo.", "Poteva ospitare circa cinquantamila spettatori.", "Nel Medioevo fu usato come cava di pietra.", "Oggi è uno dei monumenti più visitati al mondo."],
        ["Scheda prodotto: il bollitore Alba contiene un litro e mezzo.", "Si spegne da solo quando l'acqua bolle.", "La base ruota di trecentosessanta gradi.", "La garanzia è di due anni."],
        ["I nuovi assunti ricevono il portatile il primo giorno.", "L'ufficio informatico crea l'account e installa i programmi.", "La password va cambiata ogni sei mesi.", "I permessi di accesso li chiede il responsabile del gruppo."],
        ["Quest'inverno è piovuto meno del solito.", "I bacini del sud sono sotto la metà.", "Diversi comuni hanno limitato l'irrigazione dei giardini.", "Il servizio meteorologico prevede una primavera asciutta."],
        ["La funzione restituisce un elenco ordinato per punteggio.", "In caso di parità decide l'identificativo del documento.", "Un filtro limita la ricerca a una fonte.", "Una richiesta vuota genera un errore di validazione."],
        ["Il treno per Milano parte dal binario 7 alle 10:12.", "La carrozza ristorante è a metà treno.", "I passeggeri di prima classe salgono sulla carrozza 1.", "Il viaggio dura circa tre ore."],
    ],
}  # fmt: skip
